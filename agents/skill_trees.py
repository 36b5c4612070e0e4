"""The decision trees of the skills other than the default (SPEC section 6).

Each is registered under its skill's name with `@decision_tree`; the loop runs them
as it runs the default tree. Their bookkeeping lives in the state's extension area,
so a paused or interrupted run keeps it.
"""

from __future__ import annotations

import json
from typing import Any

from agents import wording
from agents.state import AgentState, Metric, Notice, TerminationReason
from agents.tools import ToolResult
from agents.tree import DefaultDecisionTree, Measure, Stop, decision_tree

QUICK_ANSWER_HINT = "Answer directly and briefly; use a tool only if you must."
PLAN_HINT = (
    "Before you search, write a short numbered plan (2-4 steps) of what you will look up, "
    "then follow it."
)
NOTHING_NEW_NOTICE = (
    "Two searches in a row found nothing new, so the Oracle is writing its answer now."
)
# A round hint (HINT_PREFIX): a Continue takes it out of the history, as it does the
# limits' wind-down instruction.
NOTHING_NEW_INSTRUCTION = (
    f"{wording.HINT_PREFIX} your last two searches found nothing new. No more tools are "
    "available: answer the user's question now from what you have found."
)

SEARCH_TOOL = "search_documents"
SEARCHES_WITH_NOTHING_NEW = 2  # in a row, before the run winds down


def is_first_call(state: AgentState) -> bool:
    """Whether the next call is the run's first (not so after a Continue or a resume)."""
    return state.total.iterations == 0


@decision_tree("quick_answer")
class QuickAnswerTree(DefaultDecisionTree):
    """The default rules under the quick-answer skill's small limits (agents.skills),
    with the model told on its first call to answer directly."""

    def on_turn_start(self, state: AgentState) -> AgentState:
        if is_first_call(state):
            state.pending_hints.append(QUICK_ANSWER_HINT)
        return super().on_turn_start(state)


@decision_tree("deep_research")
class DeepResearchTree(DefaultDecisionTree):
    """Plans before it searches, and stops searching once searching stops paying:
    when two searches in a row bring no passage it has not seen, the next call has no
    tools and is the last, and its answer completes the run (a rule the default tree
    does not have)."""

    namespace = "deep_research"

    def on_turn_start(self, state: AgentState) -> AgentState:
        if is_first_call(state):
            state.pending_hints.append(PLAN_HINT)
        area = self._area(state)
        if area["searches_with_nothing_new"] >= SEARCHES_WITH_NOTHING_NEW:
            area["searches_with_nothing_new"] = 0
            if state.wind_down_reason is None:
                # Set before the limits' own rules look: an answer given now is a
                # finished one, even when this is also the last call the limits allow.
                state.wind_down_reason = TerminationReason.COMPLETED
                state.pending_notices.append(Notice("info", NOTHING_NEW_NOTICE))
                state.pending_hints.append(NOTHING_NEW_INSTRUCTION)
        return super().on_turn_start(state)

    def on_tool_result(self, state: AgentState, result: ToolResult) -> AgentState:
        state = super().on_tool_result(state, result)
        if result.name != SEARCH_TOOL:
            return state
        area = self._area(state)
        seen: list[list[Any]] = area["seen"]
        new = [key for key in passages_found(result) if key not in seen]
        seen.extend(new)
        area["searches_with_nothing_new"] = 0 if new else area["searches_with_nothing_new"] + 1
        return state

    def _response_ends_run(self, state: AgentState, measures: dict[Metric, Measure]) -> Stop | None:
        last = state.last_response
        if (
            state.wind_down_reason is TerminationReason.COMPLETED
            and last is not None
            and last.wind_down
            and not last.interrupted
            and not last.had_tool_calls
        ):
            return Stop(TerminationReason.COMPLETED)  # the answer, and no limit was hit
        return super()._response_ends_run(state, measures)

    def _area(self, state: AgentState) -> dict[str, Any]:
        """This tree's bookkeeping; the count of fruitless searches starts again with
        each round (a Continue lets the Oracle search on)."""
        area = state.extension(self.namespace)
        area.setdefault("seen", [])  # [document_id, start] pairs: lists, for JSON
        if area.get("round") != state.rounds:
            area["round"] = state.rounds
            area["searches_with_nothing_new"] = 0
        return area


def passages_found(result: ToolResult) -> list[list[Any]]:
    """The passages a `search_documents` result brought, each as [document_id, start];
    none for an error or a result that is not the tool's JSON."""
    if not result.ok:
        return []
    try:
        found = json.loads(result.content)
    except ValueError:
        return []
    items = found.get("results") if isinstance(found, dict) else None
    keys: list[list[Any]] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and "document_id" in item and "start" in item:
            key = [item["document_id"], item["start"]]
            if key not in keys:
                keys.append(key)
    return keys
