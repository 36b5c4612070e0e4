"""Reads for the settings page: model choices, prices, the user's API tokens."""

from __future__ import annotations

import functools
from typing import Any

from django.db.models import QuerySet

from chat.models import ApiToken
from settings_ui.policy import allowed_models, server_default_label


def model_choices() -> list[tuple[str, str]]:
    """(value, label) of every model a user may pick; "" is the server default."""
    return [("", server_default_label())] + [(model, model) for model in allowed_models()]


@functools.lru_cache(maxsize=64)
def model_has_price(model: str) -> bool:
    """Whether the engine can price `model` (LiteLLM's bundled map); "" is the offline model."""
    if not model:
        return False
    from agents.litellm_model import model_prices  # imports LiteLLM, which is slow to load

    return any(price > 0 for price in model_prices(model))


def api_token_list(*, user: Any) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at")


def api_token_get(*, user: Any, token_id: int) -> ApiToken | None:
    return ApiToken.objects.filter(user=user, pk=token_id).first()
