"""Writes for accounts."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction


@transaction.atomic
def user_sign_up(*, username: str, password: str) -> User:
    """Create an account. The very first account administers the site (staff and superuser)."""
    user_model = get_user_model()
    # Lock the table's first row, if any, so two first sign-ups cannot both win.
    first = not user_model.objects.select_for_update().exists()
    user = user_model.objects.create_user(username=username, password=password)
    if first:
        user.is_staff = True
        user.is_superuser = True
        user.save(update_fields=["is_staff", "is_superuser"])
    return user
