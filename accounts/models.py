"""Accounts' own records: invites to sign up, and the API tokens a user's scripts log in with."""

from __future__ import annotations

import hashlib
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


class ApiToken(models.Model):
    """A bearer token for the HTTP API. Only a hash is stored; the token is shown once."""

    PREFIX = "oracle_"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    key_hash = models.CharField(max_length=64, unique=True)
    hint = models.CharField(max_length=16)  # the first characters, to tell tokens apart
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # Made in chat, where the table keeps its name (moved with a state-only migration).
        db_table = "chat_apitoken"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.hint}… ({self.name or 'unnamed'})"

    @staticmethod
    def hash(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @classmethod
    def generate(cls) -> str:
        return cls.PREFIX + secrets.token_urlsafe(32)
