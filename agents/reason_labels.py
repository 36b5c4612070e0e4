"""What each reason a run ended for is called: on the user's own pages, and on the
staff pages, which read about everyone's runs."""

from __future__ import annotations

from agents.codes import TerminationReason

# What each reason a run ended for is called on the page (SPEC 4 names the codes).
REASON_LABELS: dict[str, str] = {
    TerminationReason.COMPLETED: "Completed",
    TerminationReason.CANCELLED: "Stopped by you",
    TerminationReason.MAX_ITERATIONS: "Iteration limit",
    TerminationReason.TOKEN_BUDGET: "Token budget",
    TerminationReason.TIMEOUT: "Time limit",
    TerminationReason.COST_BUDGET: "Cost limit",
    TerminationReason.NO_PROGRESS: "No progress",
    TerminationReason.TOOL_ERRORS: "Tool errors",
    TerminationReason.TOOL_BUDGET: "Tool-call budget",
    TerminationReason.TOOL_BUDGET_VIOLATION: "Tool-call budget",
    TerminationReason.TURN_BUDGET_EXHAUSTED: "Extensions used up",
    TerminationReason.PROVIDER_ERROR: "Model error",
    TerminationReason.INTERRUPTED: "Interrupted",
    TerminationReason.CONTEXT_WINDOW: "Context window",
    TerminationReason.PAUSE_EXPIRED: "Waited too long",
}


# Staff read about everyone's runs (the dashboard): the user's own stop is named as
# theirs, and the two tool-call budget endings are told apart.
STAFF_REASON_LABELS: dict[str, str] = {
    **REASON_LABELS,
    TerminationReason.CANCELLED: "Stopped by the user",
    TerminationReason.TOOL_BUDGET_VIOLATION: "Tool calls past the budget",
}


def reason_label(reason: str, *, staff: bool = False) -> str:
    """What a termination reason is called on the page (`staff`: on the staff pages)."""
    return (STAFF_REASON_LABELS if staff else REASON_LABELS).get(reason, reason)
