"""Authentication for the JSON API: a logged-in session or `Authorization: Bearer <token>`.

Session requests keep Django's CSRF protection for unsafe methods; bearer
requests carry no cookies, so CSRF does not apply to them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import timedelta
from io import BytesIO
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParser, MultiPartParserError
from django.middleware.csrf import CsrfViewMiddleware
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from accounts.models import ApiToken
from ops.errors import unreadable_form
from ops.ratelimits import over_limit, too_many

View = Callable[..., HttpResponse]
LAST_USED_RESOLUTION = timedelta(minutes=1)


def error(status: int, message: str, **extra: Any) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def _bearer_user(request: HttpRequest) -> Any | None:
    header = request.headers.get("Authorization", "")
    scheme, _, raw = header.partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=ApiToken.hash(raw.strip()), user__is_active=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    # "Last used" is shown to the minute: a write on every request would only make
    # API calls wait on each other (and on the runs' writes) for the database's lock.
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


def _csrf_failure(request: HttpRequest) -> HttpResponse | None:
    check = CsrfViewMiddleware(lambda r: HttpResponse())
    check.process_request(request)
    return check.process_view(request, lambda r: HttpResponse(), (), {})


def _unreadable_form(request: HttpRequest) -> HttpResponse | None:
    """A multipart POST whose body no parser could read, whatever the endpoint does
    with it: Django's parser checks the header (the boundary) before it reads a byte."""
    if request.method != "POST" or request.content_type != "multipart/form-data":
        return None
    try:
        MultiPartParser(request.META, BytesIO(), [], request.encoding)
    except MultiPartParserError as problem:
        return unreadable_form(problem)
    return None


def authenticate(request: HttpRequest) -> HttpResponse | None:
    """Set `request.user` from a bearer token or the session; an error response if neither."""
    if "Authorization" in request.headers:
        # Guessing tokens: an address that sent too many unknown ones waits.
        if (retry := over_limit(request, "bad_token_ip", "ip", count=False)) is not None:
            return too_many(request, retry, api=True)
        user = _bearer_user(request)
        if user is None:
            over_limit(request, "bad_token_ip", "ip")  # counted: one more unknown token
            return error(401, "Invalid or revoked API token.")
        request.user = user
        return None
    if not request.user.is_authenticated:
        return error(401, "Log in or send Authorization: Bearer <token>.")
    if request.method not in ("GET", "HEAD", "OPTIONS") and (failure := _csrf_failure(request)):
        return error(403, "CSRF check failed.") if failure.status_code == 403 else failure
    return None


def api_endpoint(*methods: str) -> Callable[[View], View]:
    """Authenticate (session or bearer), allow only `methods`, answer errors as JSON."""

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method not in methods:
                response = error(405, f"Use {', '.join(methods)}.")
                response["Allow"] = ", ".join(methods)
                return response
            return (
                _unreadable_form(request) or authenticate(request) or view(request, *args, **kwargs)
            )

        return login_not_required(csrf_exempt(wrapper))

    return decorate
