"""What the operator allows, read from Django settings, and validation against it.

The bounds of each field come from `agents.config`; the operator adds the list
of models users may pick and the hard caps that end any run.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings

from agents.config import AgentConfig, OperatorLimits

OFFLINE_MODEL_LABEL = "Offline model (built in)"


def allowed_models() -> list[str]:
    """The models a user may choose, each once, in the operator's order; "" (the server
    default) is always allowed too."""
    return list(dict.fromkeys(model for model in settings.ORACLE_MODELS if model))


def server_default_label() -> str:
    """How the server default ("" in a config) is shown to users."""
    if settings.ORACLE_MODEL:
        return f"Server default ({settings.ORACLE_MODEL})"
    return OFFLINE_MODEL_LABEL


def server_default_model() -> str:
    """The model runs use with the server default, in words."""
    return settings.ORACLE_MODEL or "the built-in offline model"


def model_option(model: str) -> str:
    """The option of the model select that stands for `model`: the server default's own
    model is the server default's option (""), so the list names it once."""
    return "" if model == settings.ORACLE_MODEL else model


def effective_model(config: AgentConfig) -> str:
    """The model a run with `config` uses; "" is the built-in offline model."""
    return config.model or settings.ORACLE_MODEL


def operator_limits() -> OperatorLimits:
    """The operator's hard caps (ORACLE_HARD_* settings)."""
    return OperatorLimits(
        max_iterations=settings.ORACLE_HARD_MAX_ITERATIONS,
        max_tool_calls=settings.ORACLE_HARD_MAX_TOOL_CALLS,
        token_budget=settings.ORACLE_HARD_TOKEN_BUDGET,
        timeout_seconds=settings.ORACLE_HARD_TIMEOUT_SECONDS,
        max_cost_usd=settings.ORACLE_HARD_MAX_COST_USD,
    )


def config_from_raw(raw: Mapping[str, object], *, base: AgentConfig) -> AgentConfig:
    """`AgentConfig.from_raw` over `base` with the operator's models; raises `ConfigError`."""
    return AgentConfig.from_raw(raw, base=base, allowed_models=allowed_models())
