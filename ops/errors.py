"""What a visitor gets when a request goes wrong: the API answers in JSON (as its own
errors do), pages get the site's own (templates/403.html, 404.html: its layout, what
happened and the way back; 500.html stands alone, as anything may have failed).
Django's debug pages appear only with DEBUG on, which is off unless asked for."""

from __future__ import annotations

import base64
import hashlib
import re

from csp.decorators import csp_update
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.views import defaults

STALE_FORM = (
    "The form was sent from a page that had gone out of date, perhaps because you logged "
    "in or out in another tab. Nothing was changed: go back, reload the page and try again."
)


_STYLE = re.compile(r"<style>(.*?)</style>", re.S)


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def unreadable_form(problem: MultiPartParserError) -> JsonResponse:
    """The API's answer to a multipart body that cannot be read (no boundary, say)."""
    return JsonResponse(
        {"error": f"The body could not be read as multipart/form-data ({problem}). "
                  "Nothing was changed."},
        status=400,
    )  # fmt: skip


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        if isinstance(exception, RequestDataTooBig):
            return JsonResponse({"error": "The request body is too large."}, status=413)
        if isinstance(exception, MultiPartParserError):
            return unreadable_form(exception)
        return JsonResponse({"error": "Bad request."}, status=400)
    return defaults.bad_request(request, exception or Exception())


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"error": "Forbidden."}, status=403)
    return defaults.permission_denied(request, exception or Exception())


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form sent without its page's current CSRF token (CSRF_FAILURE_VIEW)."""
    if _is_api(request):
        return JsonResponse({"error": "CSRF check failed."}, status=403)
    return render(request, "403.html", {"reason": STALE_FORM}, status=403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"error": "Not found."}, status=404)
    return defaults.page_not_found(request, exception or Exception())


def server_error(request: HttpRequest) -> HttpResponseBase:
    if _is_api(request):
        return JsonResponse({"error": "Something went wrong on our side."}, status=500)
    page = defaults.server_error(request)
    # Its CSS is inline: the Content-Security-Policy allows that <style>, by its hash.
    hashes = [
        "'sha256-" + base64.b64encode(hashlib.sha256(style.encode()).digest()).decode() + "'"
        for style in _STYLE.findall(page.content.decode())
    ]
    return csp_update({"style-src": hashes})(lambda _request: page)(request)
