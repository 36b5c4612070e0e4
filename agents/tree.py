"""Decision trees: when a run goes on, winds down, pauses, extends or ends (SPEC 3-6).

The loop asks the tree before every iteration; the tree reads the state, queues
notices and hints in it, and never does I/O. Skills register their own trees
with `@decision_tree("name")`, which never touches the loop. What is measured of
a round against its limits is `agents.measures`; the decisions a tree can give and
its protocol are `agents.decisions`, the registry by name `agents.tree_registry`.
"""

from __future__ import annotations

from agents import limit_warnings, wording
from agents.config import AgentConfig, LimitAction, OperatorLimits
from agents.decisions import GO as GO
from agents.decisions import Continue as Continue
from agents.decisions import Decision as Decision
from agents.decisions import DecisionTree as DecisionTree
from agents.decisions import Pause as Pause
from agents.decisions import Stop as Stop
from agents.measures import Measure as Measure
from agents.measures import (
    headroom,
    iteration_ceiling,
    limit_hit,
    round_measures,
    warning_threshold,
)
from agents.progress import MAX_PERIOD, Action, find_cycle, history_size
from agents.state import AgentState, LimitHit, Metric, Notice, TerminationReason, TimeWarning
from agents.tools import ToolResult
from agents.tree_registry import TreeFactory as TreeFactory
from agents.tree_registry import UnknownTreeError as UnknownTreeError
from agents.tree_registry import create_tree as create_tree
from agents.tree_registry import decision_tree as decision_tree
from agents.tree_registry import tree_names as tree_names


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
        return iteration_ceiling(self.config, self.operator, state)

    def measures(self, state: AgentState) -> dict[Metric, Measure]:
        """The limited quantities by metric, in the priority order of SPEC section 3."""
        return round_measures(self.config, self.operator, state, self.iteration_ceiling(state))

    # --- the protocol -----------------------------------------------------------

    def should_continue(self, state: AgentState) -> Decision:
        if state.cancel_requested:
            return Stop(TerminationReason.CANCELLED)
        if state.provider_failure is not None:
            return Stop(TerminationReason.PROVIDER_ERROR, state.limit_hit)
        if state.context.overflow:
            return Stop(TerminationReason.CONTEXT_WINDOW, state.limit_hit)
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
            return Pause(tool_calls.reason, limit_hit(tool_calls))
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
                limit_warnings.warn_past_limit(state, measure)
        if state.wind_down_reason is None:
            state.wind_down_reason = self._wind_down_reason(state, measures)
            if state.wind_down_reason is not None:
                state.pending_hints.append(wording.WIND_DOWN_INSTRUCTION)
        for measure in measures.values():
            self._soft_warning(state, measure)
        state.call_limits = headroom(state, measures)
        if Metric.TIME not in state.warnings_given:
            # The time warning can fall due while the call streams: the loop gives it then.
            state.call_limits.time_warning = self._time_warning(state, measures[Metric.TIME])
        return state

    def _time_warning(self, state: AgentState, time: Measure) -> TimeWarning:
        # The same from call to call until something it says changes: made once.
        at = warning_threshold(time)
        then = self._what_happens_at(state, time)
        key = (at, time.shown_limit, state.rounds, state.wind_down_reason, then)
        if self._prepared_time_warning is None or self._prepared_time_warning[0] != key:
            notice, hint = limit_warnings.warning(state, time, at, then)
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
            reason = state.wind_down_reason or TerminationReason.MAX_ITERATIONS
            spent = (
                Metric.TOOL_CALLS if reason is TerminationReason.TOOL_BUDGET else Metric.ITERATIONS
            )
            if last.had_tool_calls:  # named after the limit that made it the last call
                return Stop(TerminationReason.TOOL_BUDGET_VIOLATION, limit_hit(measures[spent]))
            cut_off = "while continuing an answer the model's output limit had cut off"
            return Stop(
                reason, limit_hit(measures[spent], detail=cut_off if last.continued else "")
            )
        if last.cut_off:
            return None  # the model's own output limit: the next call continues the answer
        if not last.had_tool_calls:
            return Stop(TerminationReason.COMPLETED)
        return None

    def _at_hard_limit(self, state: AgentState, measure: Measure) -> Stop | Pause:
        if self._pauses_at(measure):
            return Pause(measure.reason, limit_hit(measure))
        cap, note = self._spending_cap(measure)
        hit = limit_hit(measure, projected=measure.value < measure.hard_limit, cap=cap, detail=note)
        if (
            measure.metric is Metric.ITERATIONS
            and self.config.limit_action is LimitAction.EXTEND
            and not state.unlimited_iterations
        ):
            return Stop(TerminationReason.TURN_BUDGET_EXHAUSTED, hit)
        return Stop(measure.reason, hit)

    def _spending_cap(self, measure: Measure) -> tuple[str, str]:
        """The name and note of the spending cap a cost stop is at when the operator's cost
        cap is what is left of a larger one (a daily cap); empty for the run's own limits."""
        op = self.operator
        if measure.metric is Metric.COST and measure.is_operator_cap and op.cost_cap_name:
            return op.cost_cap_name, op.cost_cap_note
        return "", ""

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

    def _soft_warning(self, state: AgentState, measure: Measure) -> None:
        # Tokens and cost warn on the next call's estimate: a call that would jump past
        # the percentage is warned about before it is made, not after.
        if measure.metric in state.warnings_given:
            return  # once per round and quantity
        if measure.projected < warning_threshold(measure):
            return
        then = self._what_happens_at(state, measure)
        if measure.value < measure.shown_limit:
            limit_warnings.give_warning(state, measure, measure.value, then)
        elif measure.metric is Metric.TOOL_CALLS and state.wind_down_reason is not None:
            # One response's tool calls went past the warning and the limit at once: say
            # so now, before the last call, rather than only at the end.
            limit_warnings.give_warning(state, measure, measure.value, then, reached=True)
        # Otherwise past it already: the stop, pause or warn-action notice says so.

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

    def _stuck(self, state: AgentState) -> LimitHit | None:
        repeats, recent = self.config.no_progress_repeats, state.recent_actions
        if not recent or recent[-1] not in recent[-1 - MAX_PERIOD : -1]:
            return None  # a cycle of up to MAX_PERIOD calls repeats its last call in them
        stuck = find_cycle([Action(*row) for row in recent], repeats)
        if stuck is None:
            return None
        return LimitHit(Metric.REPEATS, repeats, repeats, pattern=stuck.describe())
