"""The request type of views that only a logged-in user reaches."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class AuthenticatedHttpRequest(HttpRequest):
    """A request past `LoginRequiredMiddleware` or the API's `authenticate`: `user` is
    a `User`, never `AnonymousUser`. For type checkers only; views get an HttpRequest."""

    user: User
    htmx: HtmxDetails  # django-htmx's middleware sets it on every request
