from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models


def _new_code() -> str:
    return secrets.token_urlsafe(24)


class Invite(models.Model):
    """A one-time sign-up link. A staff invite makes the account it creates staff: how
    a fresh site gets its administrator (`serve` prints one while no staff exists), so
    that staff rights go to whoever holds the link, not to whoever signs up first."""

    code = models.CharField(max_length=64, unique=True, default=_new_code, editable=False)
    staff = models.BooleanField(
        default=False, help_text="The account it creates is staff (and superuser)."
    )
    note = models.CharField(max_length=200, blank=True, help_text="Who it is for.")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    used_at = models.DateTimeField(null=True, blank=True, editable=False)
    used_by = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="invite", editable=False,
    )  # fmt: skip

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        kind = "Staff invite" if self.staff else "Invite"
        return f"{kind} {self.code[:6]}… ({'used' if self.used_at else 'open'})"

    def path(self) -> str:
        return f"/signup/?invite={self.code}"
