"""What every page needs to know about accounts."""

from __future__ import annotations

from django.http import HttpRequest

from accounts.services import OPEN, signup_mode


def sign_up(request: HttpRequest) -> dict[str, bool]:
    """Offer "Sign up" only where anyone may: an invited visitor comes with a link."""
    return {"signup_open": signup_mode() == OPEN}
