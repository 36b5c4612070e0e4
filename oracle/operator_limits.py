"""The operator's hard caps (ORACLE_HARD_*): they end every run whatever the user's
settings say, even under the `warn` action or unlimited iterations (SPEC sections 2
and 5). The defaults are the engine's own (agents.config.OperatorLimits). And the
bounds on one tool call and on a run's helpers (agents.config.CallBounds): a call past
one is refused, and the model told why."""

from __future__ import annotations

import environ
from django.core.exceptions import ImproperlyConfigured

from agents.config import CallBounds, OperatorLimits

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


BOUND_NAMES = (
    "ORACLE_TOOL_ARGUMENTS_MAX_BYTES",
    "ORACLE_SUBAGENTS_MAX_PER_RUN",
    "ORACLE_SUBAGENTS_MAX_DEPTH",
    "ORACLE_SUBAGENTS_MAX_CONCURRENT",
)
# Less than this and ordinary calls (a search, a calculation) could not be made.
MIN_TOOL_ARGUMENTS_BYTES = 1_024


def call_bounds(env: environ.Env) -> tuple[int, int, int, int]:
    """The bounds on one tool call and on a run's helpers (agents.config.CallBounds),
    named in BOUND_NAMES, in that order; a bad value is refused, its name given."""
    defaults = CallBounds()
    values = (
        defaults.tool_arguments_max_bytes,
        defaults.subagents_max_per_run,
        defaults.subagents_max_depth,
        defaults.subagents_max_concurrent,
    )
    bounds = []
    for name, default in zip(BOUND_NAMES, values, strict=True):
        try:
            bounds.append(env.int(name, default=default))
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be a whole number.") from None
    if bounds[0] < MIN_TOOL_ARGUMENTS_BYTES:
        raise ImproperlyConfigured(
            f"{BOUND_NAMES[0]} must be at least {MIN_TOOL_ARGUMENTS_BYTES} (bytes)."
        )
    for name, value in zip(BOUND_NAMES[1:], bounds[1:], strict=True):
        if value < 1:
            raise ImproperlyConfigured(f"{name} must be at least 1.")
    return bounds[0], bounds[1], bounds[2], bounds[3]
