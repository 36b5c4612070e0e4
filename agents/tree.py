"""Decision trees: when a run goes on, winds down, pauses, extends or ends (SPEC 3-6).

The loop asks the tree before every iteration; the tree reads the state, queues
notices and hints in it, and never does I/O. Skills register their own trees
with `@decision_tree("name")`, which never touches the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeVar

from agents import wording
from agents.config import AgentConfig, LimitAction, OperatorLimits
from agents.progress import MAX_PERIOD, Action, find_cycle, history_size
from agents.state import (
    AgentState,
    CallLimits,
    LimitHit,
    Metric,
    Notice,
    TerminationReason,
    TimeWarning,
)
from agents.tools import ToolResult


@dataclass(frozen=True)
class Continue:
    """Make another model call."""


@dataclass(frozen=True)
class Stop:
    """End the run with `reason`; `hit` gives the figures of the limit that ended it."""

    reason: TerminationReason
    hit: LimitHit | None = None


@dataclass(frozen=True)
class Pause:
    """Save the run at a limit and wait for the user (the `pause` limit action)."""

    reason: TerminationReason
    hit: LimitHit


Decision = Continue | Stop | Pause
GO = Continue()
_TOLERANCE = 1e-6


class DecisionTree(Protocol):
    """The control flow of a run, pluggable per skill (SPEC section 6)."""

    def should_continue(self, state: AgentState) -> Decision:
        """Whether to make another model call: it decides, and changes nothing."""
        ...

    def on_turn_start(self, state: AgentState) -> AgentState:
        """Prepare the next call: warnings, hints, wind-down, the call's headroom."""
        ...

    def on_tool_result(self, state: AgentState, result: ToolResult) -> AgentState:
        """Take note of one tool result (progress, errors)."""
        ...

    def get_config(self) -> AgentConfig:
        """The limits this tree runs under."""
        ...


TreeFactory = Callable[[AgentConfig, OperatorLimits], DecisionTree]
F = TypeVar("F", bound=TreeFactory)

_TREES: dict[str, TreeFactory] = {}


class UnknownTreeError(LookupError):
    """No decision tree is registered under that name."""


def decision_tree(name: str) -> Callable[[F], F]:
    """Register a tree factory (usually the class) under a skill name."""

    def register(factory: F) -> F:
        if name in _TREES and _TREES[name] is not factory:
            raise ValueError(f"a decision tree named {name!r} is already registered")
        _TREES[name] = factory
        return factory

    return register


def tree_names() -> list[str]:
    """The registered skill names, sorted."""
    return sorted(_TREES)


def create_tree(
    name: str, config: AgentConfig, operator: OperatorLimits | None = None
) -> DecisionTree:
    """Build the tree registered under `name`."""
    try:
        factory = _TREES[name]
    except KeyError:
        known = ", ".join(tree_names())
        raise UnknownTreeError(f"unknown skill {name!r} (known: {known})") from None
    return factory(config, operator or OperatorLimits())


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


@decision_tree("default")
class DefaultDecisionTree:
    """SPEC sections 3-5: termination in priority order, warnings, wind-down, limit actions."""

    def __init__(self, config: AgentConfig, operator: OperatorLimits | None = None) -> None:
        self.config = config
        self.operator = operator or OperatorLimits()
        self._prepared_time_warning: tuple[tuple[object, ...], TimeWarning] | None = None

    def get_config(self) -> AgentConfig:
        return self.config

    # --- measures ---------------------------------------------------------------

    def iteration_ceiling(self, state: AgentState) -> int:
        """The iteration count at which this round ends (raised by extensions)."""
        cap = self.operator.max_iterations
        if state.unlimited_iterations or self.config.limit_action is LimitAction.WARN:
            return cap
        return state.iteration_ceiling or min(self.config.max_iterations, cap)

    def measures(self, state: AgentState) -> dict[Metric, Measure]:
        """The limited quantities by metric, in the priority order of SPEC section 3."""
        cfg, op, used = self.config, self.operator, state.round
        warn = cfg.limit_action is LimitAction.WARN

        def hard(user_limit: float, cap: float) -> float:
            return cap if warn else min(user_limit, cap)

        ceiling = self.iteration_ceiling(state)
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

    # --- the protocol -----------------------------------------------------------

    def should_continue(self, state: AgentState) -> Decision:
        if state.cancel_requested:
            return Stop(TerminationReason.CANCELLED)
        if state.provider_failure is not None:
            return Stop(TerminationReason.PROVIDER_ERROR, state.limit_hit)
        measures = self.measures(state)
        ended = self._response_ends_run(state, measures)
        if ended is not None:
            return ended
        for metric in (Metric.ITERATIONS, Metric.TOKENS, Metric.TIME, Metric.COST):
            measure = measures[metric]
            if measure.reached and not (metric is Metric.ITERATIONS and self._can_extend(state)):
                return self._at_hard_limit(state, measure)  # (extending is on_turn_start's)
        stuck = self._stuck(state)
        if stuck is not None:
            return Stop(TerminationReason.NO_PROGRESS, stuck)
        errors, allowed = state.consecutive_tool_errors, self.config.max_consecutive_tool_errors
        if errors >= allowed:
            return Stop(
                TerminationReason.TOOL_ERRORS, LimitHit(Metric.TOOL_ERRORS, errors, allowed)
            )
        tool_calls = measures[Metric.TOOL_CALLS]
        if tool_calls.reached and self._pauses_at(tool_calls):
            return Pause(tool_calls.reason, _hit(tool_calls))
        # Otherwise a spent tool budget is handled by the wind-down call (on_turn_start).
        return GO

    def on_turn_start(self, state: AgentState) -> AgentState:
        state.iteration_ceiling = self.iteration_ceiling(state)
        measures = self.measures(state)
        if measures[Metric.ITERATIONS].reached and self._can_extend(state):
            self._extend(state)
            measures = self.measures(state)
        if self.config.limit_action is LimitAction.WARN:
            for measure in measures.values():
                self._warn_past_limit(state, measure)
        if state.wind_down_reason is None:
            state.wind_down_reason = self._wind_down_reason(state, measures)
            if state.wind_down_reason is not None:
                state.pending_hints.append(wording.WIND_DOWN_INSTRUCTION)
        for measure in measures.values():
            self._soft_warning(state, measure)
        time = measures[Metric.TIME]
        state.call_limits = CallLimits(
            seconds=time.hard_limit - state.round.elapsed_s,
            tokens=int(measures[Metric.TOKENS].hard_limit) - state.round.tokens,
            cost_usd=measures[Metric.COST].hard_limit - state.round.cost_usd,
            tool_calls=int(measures[Metric.TOOL_CALLS].hard_limit) - state.round.tool_calls,
        )
        if Metric.TIME not in state.warnings_given:
            # The time warning can fall due while the call streams: the loop gives it then.
            state.call_limits.time_warning = self._time_warning(state, time)
        return state

    def _time_warning(self, state: AgentState, time: Measure) -> TimeWarning:
        # The same from call to call until something it says changes: made once.
        at = self._warning_threshold(time)
        key = (
            at,
            time.shown_limit,
            state.rounds,
            state.wind_down_reason,
            self._what_happens_at(state, time),
        )
        if self._prepared_time_warning is None or self._prepared_time_warning[0] != key:
            notice, hint = self._warning(state, time, at)
            warning = TimeWarning(at, time.shown_limit, notice.text, hint)
            self._prepared_time_warning = (key, warning)
        return self._prepared_time_warning[1]

    def on_tool_result(self, state: AgentState, result: ToolResult) -> AgentState:
        action = Action.from_result(result)
        state.recent_actions.append([action.name, action.arguments, action.outcome])
        del state.recent_actions[: -history_size(self.config.no_progress_repeats)]
        state.consecutive_tool_errors = 0 if result.ok else state.consecutive_tool_errors + 1
        return state

    # --- the rules --------------------------------------------------------------

    def _response_ends_run(self, state: AgentState, measures: dict[Metric, Measure]) -> Stop | None:
        last = state.last_response
        if last is None or last.interrupted:
            return None
        if last.wind_down:
            if last.had_tool_calls:
                hit = _hit(measures[Metric.TOOL_CALLS])
                return Stop(TerminationReason.TOOL_BUDGET_VIOLATION, hit)
            reason = state.wind_down_reason or TerminationReason.MAX_ITERATIONS
            spent = (
                Metric.TOOL_CALLS if reason is TerminationReason.TOOL_BUDGET else Metric.ITERATIONS
            )
            cut_off = "while continuing an answer the model's output limit had cut off"
            return Stop(reason, _hit(measures[spent], detail=cut_off if last.continued else ""))
        if last.cut_off:
            return None  # the model's own output limit: the next call continues the answer
        if not last.had_tool_calls:
            return Stop(TerminationReason.COMPLETED)
        return None

    def _at_hard_limit(self, state: AgentState, measure: Measure) -> Stop | Pause:
        if self._pauses_at(measure):
            return Pause(measure.reason, _hit(measure))
        hit = _hit(
            measure,
            projected=measure.value < measure.hard_limit,
            detail=self._spending_cap(measure),
        )
        if (
            measure.metric is Metric.ITERATIONS
            and self.config.limit_action is LimitAction.EXTEND
            and not state.unlimited_iterations
        ):
            return Stop(TerminationReason.TURN_BUDGET_EXHAUSTED, hit)
        return Stop(measure.reason, hit)

    def _spending_cap(self, measure: Measure) -> str:
        """The name of the spending cap a cost stop is at when the operator's cost cap is
        what is left of a larger one (a daily cap); '' for the run's own limits."""
        op = self.operator
        if measure.metric is Metric.COST and measure.is_operator_cap and op.cost_cap_name:
            return wording.spending_cap(op.cost_cap_name, op.cost_cap_note)
        return ""

    def _pauses_at(self, measure: Measure) -> bool:
        # The operator's caps always end the run; only the user's own limits pause it.
        return self.config.limit_action is LimitAction.PAUSE and not measure.is_operator_cap

    def _can_extend(self, state: AgentState) -> bool:
        return (
            self.config.limit_action is LimitAction.EXTEND
            and not state.unlimited_iterations
            and state.extensions_used < self.config.max_extensions
            and self.iteration_ceiling(state) < self.operator.max_iterations
        )

    def _extend(self, state: AgentState) -> None:
        old = self.iteration_ceiling(state)
        new = min(old * self.config.extend_multiplier, self.operator.max_iterations)
        state.iteration_ceiling = new
        state.extensions_used += 1
        # A new ceiling gets its own warning, telling what happens when it is reached.
        state.warnings_given = [w for w in state.warnings_given if w != Metric.ITERATIONS]
        state.pending_events.append({"type": "budget.extended", "from": old, "to": new})
        text = wording.extended_notice(old, new, state.extensions_used, self.config.max_extensions)
        state.pending_notices.append(Notice("info", text, Metric.ITERATIONS, old, new))

    def _wind_down_reason(
        self, state: AgentState, measures: dict[Metric, Measure]
    ) -> TerminationReason | None:
        """The reason the next call is the last one allowed, if it is."""
        iterations, tool_calls = measures[Metric.ITERATIONS], measures[Metric.TOOL_CALLS]
        next_call_is_last = iterations.value + 1 >= iterations.hard_limit
        if next_call_is_last and not self._can_extend(state) and not self._pauses_at(iterations):
            if self.config.limit_action is LimitAction.EXTEND and not state.unlimited_iterations:
                return TerminationReason.TURN_BUDGET_EXHAUSTED
            return TerminationReason.MAX_ITERATIONS
        if tool_calls.reached and not self._pauses_at(tool_calls):
            return TerminationReason.TOOL_BUDGET
        return None

    def _warning_threshold(self, measure: Measure) -> float:
        """The value at which a quantity is warned about. Iterations: the earlier of the
        percentage and two before the limit (at least one done), so that every limit of
        3 or more is warned about at least two iterations ahead (SPEC section 3)."""
        threshold = measure.shown_limit * measure.warn_percent / 100
        if measure.metric is Metric.ITERATIONS:
            return max(1.0, min(threshold, measure.shown_limit - 2))
        return threshold

    def _soft_warning(self, state: AgentState, measure: Measure) -> None:
        # Tokens and cost warn on the next call's estimate: a call that would jump past
        # the percentage is warned about before it is made, not after.
        if measure.metric in state.warnings_given:
            return  # once per round and quantity
        if measure.projected < self._warning_threshold(measure):
            return
        if measure.value < measure.shown_limit:
            self._give_warning(state, measure, measure.value)
        elif measure.metric is Metric.TOOL_CALLS and state.wind_down_reason is not None:
            # One response's tool calls went past the warning and the limit at once: say
            # so now, before the last call, rather than only at the end.
            self._give_warning(state, measure, measure.value, reached=True)
        # Otherwise past it already: the stop, pause or warn-action notice says so.

    def _give_warning(
        self, state: AgentState, measure: Measure, value: float, *, reached: bool = False
    ) -> None:
        if measure.metric in state.warnings_given:
            return  # once per round and quantity
        state.warnings_given.append(measure.metric)
        notice, hint = self._warning(state, measure, value)
        if reached:
            notice.text = wording.reached_notice(measure.metric, value, measure.shown_limit)
        state.pending_notices.append(notice)
        if hint:
            state.pending_hints.append(hint)

    def _warning(self, state: AgentState, measure: Measure, value: float) -> tuple[Notice, str]:
        """The System message of a soft warning, and the model's hint ('' for none: the
        limit will be extended or pause the run, or the wind-down instruction says more)."""
        limit = measure.shown_limit
        then = self._what_happens_at(state, measure)
        text = wording.approaching_notice(
            measure.metric, value, limit, round_number=state.rounds, then=then
        )
        hit = LimitHit(measure.metric, value, limit)
        notice = Notice("warning", text, hit.metric, hit.value, hit.limit)
        wrap_up = not then and state.wind_down_reason is None
        return notice, wording.approaching_hint(measure.metric, value, limit) if wrap_up else ""

    def _what_happens_at(self, state: AgentState, measure: Measure) -> str:
        """'' when the run will wrap up at this limit, else what happens instead."""
        if measure.is_operator_cap:
            return ""
        if measure.metric is Metric.ITERATIONS and self._can_extend(state):
            ceiling = self.iteration_ceiling(state)
            new = min(ceiling * self.config.extend_multiplier, self.operator.max_iterations)
            return wording.extension_ahead(
                new, state.extensions_used + 1, self.config.max_extensions
            )
        if self._pauses_at(measure):
            return wording.pause_ahead()
        return ""

    def _warn_past_limit(self, state: AgentState, measure: Measure) -> None:
        if measure.value < measure.shown_limit:
            return
        key = f"{measure.metric}:limit"
        if key in state.warnings_given:
            return
        state.warnings_given.append(key)
        text = wording.warn_notice(
            measure.metric, measure.value, measure.shown_limit, measure.hard_limit
        )
        hit = LimitHit(measure.metric, measure.value, measure.shown_limit)
        state.pending_notices.append(Notice("warning", text, hit.metric, hit.value, hit.limit))

    def _stuck(self, state: AgentState) -> LimitHit | None:
        repeats, recent = self.config.no_progress_repeats, state.recent_actions
        if not recent or recent[-1] not in recent[-1 - MAX_PERIOD : -1]:
            return None  # a cycle of up to MAX_PERIOD calls repeats its last call in them
        stuck = find_cycle([Action(*row) for row in recent], repeats)
        if stuck is None:
            return None
        return LimitHit(Metric.REPEATS, repeats, repeats, pattern=stuck.describe())


def _hit(measure: Measure, *, projected: bool = False, detail: str = "") -> LimitHit:
    """The figures of a measure at its (hard) limit."""
    return LimitHit(measure.metric, measure.value, measure.hard_limit, projected, detail)
