"""What the user and the model are told about limits: every sentence in one place."""

from __future__ import annotations

from agents.state import LimitHit, Metric, TerminationReason, exact

VIOLATION_MESSAGE = "I used all available tool calls before I could finish."

WIND_DOWN_INSTRUCTION = (
    "You have reached the limit of this run: no more tools are available. "
    "Summarise the work so far and answer the user's question now, as well as you can."
)

# Hints start with this, so that a new round can take the last round's out of the history.
HINT_PREFIX = "Note from the system:"

CUT_OFF_HINT = (
    f"{HINT_PREFIX} your last answer was cut off by the model's output limit. Continue it "
    "exactly where it stopped, without repeating anything."
)

_LIMIT_NAMES = {
    Metric.ITERATIONS: "iteration limit",
    Metric.TOOL_CALLS: "tool-call limit",
    Metric.TOKENS: "token budget",
    Metric.TIME: "time limit",
    Metric.COST: "cost limit",
    Metric.REPEATS: "limit on repeated steps",
    Metric.TOOL_ERRORS: "limit on failed tool calls in a row",
    Metric.ATTEMPTS: "limit on attempts",
    Metric.SILENCE: "limit on a silent worker",
}


# --- numbers ----------------------------------------------------------------------


def number(metric: str, value: float) -> str:
    """A figure as people read it: '1,500', '10.3', '$0.045' (as many digits as are true)."""
    value = exact(metric, value)
    if metric == Metric.COST:
        text = f"{value:,.6f}".rstrip("0")
        decimals = len(text.partition(".")[2])
        return "$" + (text + "0" * (2 - decimals) if decimals < 2 else text)
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}"


def figures(metric: str, value: float, limit: float) -> str:
    """'11 of 15', '40,100 of 50,000 tokens', '$0.045 of $0.05', '10.3 of 10 seconds'."""
    unit = {Metric.TIME: " seconds", Metric.TOKENS: " tokens", Metric.SILENCE: " seconds"}
    return f"{number(metric, value)} of {number(metric, limit)}{unit.get(Metric(metric), '')}"


def limit_name(metric: str) -> str:
    """'iteration limit', 'token budget', ..."""
    return _LIMIT_NAMES[Metric(metric)]


def _of_round(round_number: int) -> str:
    return f" of round {round_number}" if round_number > 1 else ""


# --- warnings ---------------------------------------------------------------------


def approaching_notice(
    metric: str, value: float, limit: float, *, round_number: int = 1, then: str = ""
) -> str:
    """The System message at a soft warning. `then` says what happens at the limit when
    it is not the end (an extension, a pause); by default the Oracle wraps up."""
    what = f"the {limit_name(metric)}{_of_round(round_number)}"
    return f"Approaching {what} ({figures(metric, value, limit)}). " + (
        then or "The Oracle has been asked to wrap up."
    )


def reached_notice(metric: str, value: float, limit: float) -> str:
    """The warning when one step went past the warning and the limit at once."""
    return (
        f"Reached the {limit_name(metric)} ({figures(metric, value, limit)}) in one step. "
        "The Oracle has been asked to answer with what it has."
    )


def approaching_hint(metric: str, value: float, limit: float) -> str:
    """The hint the model gets in its next call after a soft warning."""
    return (
        f"{HINT_PREFIX} this run has used {figures(metric, value, limit)} of its "
        f"{limit_name(metric)}. Start wrapping up: finish only the most important steps, "
        "then answer the user."
    )


def extension_ahead(new: int, next_extension: int, allowed: int) -> str:
    """What an iteration warning says when the limit will be raised rather than end the run."""
    return f"At the limit it will be raised to {new} (extension {next_extension} of {allowed})."


def pause_ahead() -> str:
    return "At the limit the run will pause for you to continue or stop it."


def new_round_hint(round_number: int) -> str:
    """The hint at the start of a Continue: the last round's wrap-up no longer holds."""
    return (
        f"{HINT_PREFIX} the user let you go on: round {round_number} has begun with fresh "
        "limits, and tools are available again."
    )


def warn_notice(metric: str, value: float, limit: float, hard_limit: float) -> str:
    """The System message when a limit is passed under the `warn` action."""
    return (
        f"Reached the {limit_name(metric)} ({figures(metric, value, limit)}). "
        "Going on because the limit action is warn; the hard cap is "
        f"{number(metric, hard_limit)}."
    )


def extended_notice(old: int, new: int, used: int, allowed: int) -> str:
    """The System message when the iteration ceiling is raised."""
    return (
        f"Reached the iteration limit ({old} of {old}); raised it to {new} "
        f"(extension {used} of {allowed})."
    )


# --- endings ----------------------------------------------------------------------

_STOPPED = {
    TerminationReason.CANCELLED: "Stopped: the run was cancelled.",
    TerminationReason.NO_PROGRESS: "Stopped: I repeated the same steps without making progress.",
    TerminationReason.TOOL_ERRORS: "Stopped: my tool calls kept failing.",
    TerminationReason.PROVIDER_ERROR: "Stopped: the model could not be reached.",
    TerminationReason.INTERRUPTED: "Stopped: the run was interrupted.",
}


def stop_explanation(reason: TerminationReason, hit: LimitHit | None) -> str:
    """The first sentence of the final assistant message of a run that did not complete."""
    if reason is TerminationReason.TOOL_BUDGET_VIOLATION:
        return VIOLATION_MESSAGE
    if hit is None or hit.metric not in _GAUGED:
        stopped = _STOPPED.get(reason, f"Stopped ({reason.value}).")
        if reason is TerminationReason.NO_PROGRESS and hit is not None and hit.detail:
            return f"{stopped.removesuffix('.')} ({hit.detail})."
        return stopped
    if hit.projected:
        return (
            f"Stopped: the next model call would pass the {limit_name(hit.metric)} "
            f"({figures(hit.metric, hit.value, hit.limit)} used)."
        )
    what = f"the {limit_name(hit.metric)} ({figures(hit.metric, hit.value, hit.limit)})"
    if reason is TerminationReason.TURN_BUDGET_EXHAUSTED:
        return f"Stopped: reached {what} after the automatic extensions ran out."
    if hit.detail:
        return f"Stopped: reached {what} {hit.detail}."
    return f"Stopped: reached {what}."


_GAUGED = {Metric.ITERATIONS, Metric.TOOL_CALLS, Metric.TOKENS, Metric.TIME, Metric.COST}


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


def stop_notice(reason: TerminationReason, hit: LimitHit | None) -> str:
    """The System message at the end of a run that did not complete: what was counted,
    how many, against what, and what the user can do."""
    if reason is TerminationReason.CANCELLED:
        return "You stopped the run. Press Continue to let the Oracle go on from here."
    if hit is not None and hit.metric not in _GAUGED:
        return f"{_counted(reason, hit)} Press Continue to give the Oracle another round."
    if reason is TerminationReason.TOOL_BUDGET_VIOLATION and hit is not None:
        used = figures(hit.metric, hit.value, hit.limit)
        return (
            f"The Oracle used all its tool calls ({used}) and asked for more instead of "
            "answering. Press Continue to give it another round."
        )
    base = stop_explanation(reason, hit).removeprefix("Stopped: ")
    base = base[0].upper() + base[1:]
    return f"{base} Press Continue to give the Oracle another round."


def _counted(reason: TerminationReason, hit: LimitHit) -> str:
    limit = f"limit {number(hit.metric, hit.limit)}"
    if reason is TerminationReason.NO_PROGRESS:
        return f"Stopped making progress: {hit.detail or 'the same steps repeated'} ({limit})."
    if reason is TerminationReason.TOOL_ERRORS:
        return f"Stopped: {number(hit.metric, hit.value)} tool calls failed in a row ({limit})."
    if reason is TerminationReason.PROVIDER_ERROR:
        tries = f"{number(hit.metric, hit.value)} of {number(hit.metric, hit.limit)} attempts"
        detail = f": {hit.detail}" if hit.detail else ""
        return f"The model could not be reached ({tries}){detail}."
    return f"Stopped ({reason.value}): {figures(hit.metric, hit.value, hit.limit)}."


def pause_notice(hit: LimitHit | None, reason: TerminationReason) -> str:
    """The System message when a run pauses at a limit."""
    what = (
        f"the {limit_name(hit.metric)} ({figures(hit.metric, hit.value, hit.limit)})"
        if hit is not None
        else reason.value
    )
    return f"Paused at {what}. Continue to go on with a fresh round, or Stop to end the run."
