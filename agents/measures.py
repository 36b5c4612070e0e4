"""What is measured of a run's round against its limits (SPEC section 3).

Each limited quantity (iterations, tokens, time, cost, tool calls) is a `Measure`:
what the round used, what the next call would bring it to, the limit the user set
and the one that ends the run. From them come the figures of a limit reached
(`limit_hit`), the value at which one is warned about (`warning_threshold`) and
what the next call may still spend (`headroom`). Pure functions of the state and
the limits: the decision tree reads them and decides.
"""

from __future__ import annotations

from typing import NamedTuple

from agents.config import AgentConfig, LimitAction, OperatorLimits
from agents.state import AgentState, CallLimits, LimitHit, Metric, TerminationReason

_TOLERANCE = 1e-6


class Measure(NamedTuple):
    """One limited quantity of the current round, with its limits (a tuple: made twice a step)."""

    metric: Metric
    value: float
    projected: float  # value plus the estimate of the next call (tokens, cost)
    shown_limit: float  # the limit the user set, or the current ceiling
    hard_limit: float  # the limit that ends the run (the operator's cap under warn)
    warn_percent: int
    reason: TerminationReason

    @property
    def reached(self) -> bool:
        # The tolerance absorbs float sums of seconds and dollars landing a hair short.
        return (
            self.value >= self.hard_limit - _TOLERANCE
            or self.projected > self.hard_limit + _TOLERANCE
        )

    @property
    def is_operator_cap(self) -> bool:
        return self.hard_limit != self.shown_limit


def iteration_ceiling(config: AgentConfig, operator: OperatorLimits, state: AgentState) -> int:
    """The iteration count at which this round ends (raised by extensions)."""
    cap = operator.max_iterations
    if state.unlimited_iterations or config.limit_action is LimitAction.WARN:
        return cap
    return state.iteration_ceiling or min(config.max_iterations, cap)


def round_measures(
    config: AgentConfig, operator: OperatorLimits, state: AgentState, ceiling: int
) -> dict[Metric, Measure]:
    """The limited quantities by metric, in the priority order of SPEC section 3;
    `ceiling` is the round's iteration ceiling."""
    cfg, op, used = config, operator, state.round
    warn = cfg.limit_action is LimitAction.WARN

    def hard(user_limit: float, cap: float) -> float:
        return cap if warn else min(user_limit, cap)

    if state.unlimited_iterations:
        shown_iterations = float(ceiling)
    elif warn:
        shown_iterations = float(cfg.max_iterations)
    else:
        shown_iterations = float(ceiling)
    measures = [
        Measure(
            Metric.ITERATIONS,
            used.iterations,
            used.iterations,
            shown_iterations,
            ceiling,
            cfg.soft_warning_percent,
            TerminationReason.MAX_ITERATIONS,
        ),
        Measure(
            Metric.TOKENS,
            used.tokens,
            used.tokens + state.estimated_prompt_tokens,
            cfg.token_budget,
            hard(cfg.token_budget, op.token_budget),
            cfg.token_warning_percent,
            TerminationReason.TOKEN_BUDGET,
        ),
        Measure(
            Metric.TIME,
            used.elapsed_s,
            used.elapsed_s,
            cfg.timeout_seconds,
            hard(cfg.timeout_seconds, op.timeout_seconds),
            cfg.soft_warning_percent,
            TerminationReason.TIMEOUT,
        ),
        Measure(
            Metric.COST,
            used.cost_usd,
            used.cost_usd + state.estimated_call_cost_usd,
            cfg.max_cost_usd,
            hard(cfg.max_cost_usd, op.max_cost_usd),
            cfg.soft_warning_percent,
            TerminationReason.COST_BUDGET,
        ),
        Measure(
            Metric.TOOL_CALLS,
            used.tool_calls,
            used.tool_calls,
            cfg.max_tool_calls_per_turn,
            hard(cfg.max_tool_calls_per_turn, op.max_tool_calls),
            cfg.soft_warning_percent,
            TerminationReason.TOOL_BUDGET,
        ),
    ]
    return {measure.metric: measure for measure in measures}


def headroom(state: AgentState, measures: dict[Metric, Measure]) -> CallLimits:
    """What the next call may still spend before a limit ends the run."""
    return CallLimits(
        seconds=measures[Metric.TIME].hard_limit - state.round.elapsed_s,
        tokens=int(measures[Metric.TOKENS].hard_limit) - state.round.tokens,
        cost_usd=measures[Metric.COST].hard_limit - state.round.cost_usd,
        tool_calls=int(measures[Metric.TOOL_CALLS].hard_limit) - state.round.tool_calls,
    )


def warning_threshold(measure: Measure) -> float:
    """The value at which a quantity is warned about. Iterations: the earlier of the
    percentage and two before the limit (at least one done), so that every limit of
    3 or more is warned about at least two iterations ahead (SPEC section 3)."""
    threshold = measure.shown_limit * measure.warn_percent / 100
    if measure.metric is Metric.ITERATIONS:
        return max(1.0, min(threshold, measure.shown_limit - 2))
    return threshold


def limit_hit(
    measure: Measure, *, projected: bool = False, detail: str = "", cap: str = ""
) -> LimitHit:
    """The figures of a measure at its (hard) limit."""
    return LimitHit(measure.metric, measure.value, measure.hard_limit, projected, detail, cap=cap)
