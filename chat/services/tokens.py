"""A person's API tokens: the raw secret is shown once, only its hash is kept."""

from __future__ import annotations

from django.contrib.auth.models import User

from chat.models import ApiToken


def api_token_create(*, user: User, name: str = "") -> tuple[ApiToken, str]:
    """Create a token; returns it with the raw secret, which is never stored nor shown again."""
    raw = ApiToken.generate()
    token = ApiToken.objects.create(
        user=user,
        name=name[:100],
        key_hash=ApiToken.hash(raw),
        hint=raw[: len(ApiToken.PREFIX) + 4],
    )
    return token, raw


def api_token_revoke(*, token: ApiToken) -> None:
    token.delete()
