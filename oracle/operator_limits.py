"""The operator's hard caps (ORACLE_HARD_*): they end every run whatever the user's
settings say, even under the `warn` action or unlimited iterations (SPEC sections 2
and 5). The defaults are the engine's own (agents.config.OperatorLimits)."""

from __future__ import annotations

import environ
from django.core.exceptions import ImproperlyConfigured

from agents.config import OperatorLimits

NAMES = (
    "ORACLE_HARD_MAX_ITERATIONS",
    "ORACLE_HARD_MAX_TOOL_CALLS",
    "ORACLE_HARD_TOKEN_BUDGET",
    "ORACLE_HARD_TIMEOUT_SECONDS",
    "ORACLE_HARD_MAX_COST_USD",
)


def hard_limits(env: environ.Env) -> tuple[int, int, int, float, float]:
    """The caps named in NAMES, in that order; one that is not positive is refused."""
    defaults = OperatorLimits()
    limits = (
        env.int("ORACLE_HARD_MAX_ITERATIONS", default=defaults.max_iterations),
        env.int("ORACLE_HARD_MAX_TOOL_CALLS", default=defaults.max_tool_calls),
        env.int("ORACLE_HARD_TOKEN_BUDGET", default=defaults.token_budget),
        env.float("ORACLE_HARD_TIMEOUT_SECONDS", default=defaults.timeout_seconds),
        env.float("ORACLE_HARD_MAX_COST_USD", default=defaults.max_cost_usd),
    )
    for name, value in zip(NAMES, limits, strict=True):
        if not value > 0:
            raise ImproperlyConfigured(f"{name} must be a positive number.")
    return limits
