"""Reads for the settings page and runs: model choices, prices, API tokens, subagent types."""

from __future__ import annotations

import functools
import sys
from typing import Any

from django.db.models import QuerySet

from accounts.models import ApiToken
from agents.subagents import DEFAULT_AGENT_TYPES, AgentType
from settings_ui.models import AgentTypeLimits
from settings_ui.policy import allowed_models, model_option, server_default_label


def model_choices() -> list[tuple[str, str]]:
    """(value, label) of every model a user may pick, each once; "" is the server default."""
    others = [(model, model) for model in allowed_models() if model_option(model)]
    return [("", server_default_label()), *others]


def prices_loaded() -> bool:
    """Whether this process has LiteLLM's price list in memory (its import takes about 3 s
    of CPU, which a page should not wait for). A module is in sys.modules from the start
    of its import: until its price function is defined, another request is still loading
    it, and a page that imported it now would wait on that import's lock."""
    return callable(getattr(sys.modules.get("agents.litellm_model"), "model_prices", None))


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


def subagent_types() -> list[AgentType]:
    """The subagent types runs may delegate to: the operator's enabled rows, or the
    built-in table while there are no rows at all (a database not migrated with them)."""
    rows = list(AgentTypeLimits.objects.all())
    if not rows:
        return list(DEFAULT_AGENT_TYPES)
    return [row.to_agent_type() for row in rows if row.enabled]
