"""What the user and the model are told about limits: every sentence in one place."""

from __future__ import annotations

from agents.state import LimitHit, Metric, TerminationReason

VIOLATION_MESSAGE = "I used all available tool calls before I could finish."

WIND_DOWN_INSTRUCTION = (
    "You have reached the limit of this run: no more tools are available. "
    "Summarise the work so far and answer the user's question now, as well as you can."
)

_LIMIT_NAMES = {
    Metric.ITERATIONS: "iteration limit",
    Metric.TOOL_CALLS: "tool-call limit",
    Metric.TOKENS: "token budget",
    Metric.TIME: "time limit",
    Metric.COST: "cost limit",
}


def figures(metric: str, value: float, limit: float) -> str:
    """'11 of 15', '40,100 of 50,000 tokens', '$0.71 of $1.00', '85 of 120 seconds'."""
    if metric == Metric.COST:
        return f"${value:,.2f} of ${limit:,.2f}"
    if metric == Metric.TIME:
        return f"{value:,.0f} of {limit:,.0f} seconds"
    if metric == Metric.TOKENS:
        return f"{value:,.0f} of {limit:,.0f} tokens"
    return f"{value:,.0f} of {limit:,.0f}"


def limit_name(metric: str) -> str:
    """'iteration limit', 'token budget', ..."""
    return _LIMIT_NAMES[Metric(metric)]


def approaching_notice(metric: str, value: float, limit: float) -> str:
    """The System message at a soft warning."""
    return (
        f"Approaching the {limit_name(metric)} ({figures(metric, value, limit)}). "
        "The Oracle has been asked to wrap up."
    )


def approaching_hint(metric: str, value: float, limit: float) -> str:
    """The hint the model gets in its next call after a soft warning."""
    return (
        f"Note from the system: this run has used {figures(metric, value, limit)} of its "
        f"{limit_name(metric)}. Start wrapping up: finish only the most important steps, "
        "then answer the user."
    )


def warn_notice(metric: str, value: float, limit: float, hard_limit: float) -> str:
    """The System message when a limit is passed under the `warn` action."""
    return (
        f"Reached the {limit_name(metric)} ({figures(metric, value, limit)}). "
        f"Going on because the limit action is warn; the hard cap is {hard_limit:,.0f}."
    )


def extended_notice(old: int, new: int, used: int, allowed: int) -> str:
    """The System message when the iteration ceiling is raised."""
    return (
        f"Reached the iteration limit ({old} of {old}); raised it to {new} "
        f"(extension {used} of {allowed})."
    )


_STOPPED = {
    TerminationReason.CANCELLED: "Stopped: the run was cancelled.",
    TerminationReason.NO_PROGRESS: "Stopped: I repeated the same step without making progress.",
    TerminationReason.TOOL_ERRORS: "Stopped: my tool calls kept failing.",
    TerminationReason.PROVIDER_ERROR: "Stopped: the model could not be reached.",
    TerminationReason.INTERRUPTED: "Stopped: the run was interrupted.",
}


def stop_explanation(reason: TerminationReason, hit: LimitHit | None) -> str:
    """The first sentence of the final assistant message of a run that did not complete."""
    if reason is TerminationReason.TOOL_BUDGET_VIOLATION:
        return VIOLATION_MESSAGE
    if hit is not None and hit.projected:
        return (
            f"Stopped: the next model call would pass the {limit_name(hit.metric)} "
            f"({figures(hit.metric, hit.value, hit.limit)} used)."
        )
    if hit is not None:
        what = f"the {limit_name(hit.metric)} ({figures(hit.metric, hit.value, hit.limit)})"
        if reason is TerminationReason.TURN_BUDGET_EXHAUSTED:
            return f"Stopped: reached {what} after the automatic extensions ran out."
        return f"Stopped: reached {what}."
    return _STOPPED.get(reason, f"Stopped ({reason.value}).")


def final_message(reason: TerminationReason, hit: LimitHit | None, text: str) -> str:
    """The final assistant message: the explanation, then whatever had been written."""
    if reason is TerminationReason.COMPLETED:
        return text
    explanation = stop_explanation(reason, hit)
    text = text.strip()
    if reason is TerminationReason.TOOL_BUDGET_VIOLATION:
        return f"{explanation}\n\n{text}" if text else explanation
    if text:
        return f"{explanation} Here is what I found so far:\n\n{text}"
    return f"{explanation} I had not written an answer yet; the steps I took are shown above."


def stop_notice(reason: TerminationReason, hit: LimitHit | None, detail: str | None) -> str:
    """The System message at the end of a run that did not complete."""
    base = stop_explanation(reason, hit).removeprefix("Stopped: ")
    base = base[0].upper() + base[1:]
    if reason is TerminationReason.PROVIDER_ERROR and detail:
        base = f"{base.rstrip('.')} ({detail})."
    if reason is TerminationReason.CANCELLED:
        return "You stopped the run. Press Continue to let the Oracle go on from here."
    return f"{base} Press Continue to give the Oracle another round."


def pause_notice(hit: LimitHit | None, reason: TerminationReason) -> str:
    """The System message when a run pauses at a limit."""
    what = (
        f"the {limit_name(hit.metric)} ({figures(hit.metric, hit.value, hit.limit)})"
        if hit is not None
        else reason.value
    )
    return f"Paused at {what}. Continue to go on with a fresh round, or Stop to end the run."
