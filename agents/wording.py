"""What the user and the model are told about limits: every sentence in one place."""

from __future__ import annotations

import json
from typing import Any

from agents.model import ModelProblem
from agents.state import (
    CAP_NOTE_SEPARATOR,
    LimitHit,
    Metric,
    ProviderFailure,
    TerminationReason,
    exact,
)

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


def stop_explanation(
    reason: TerminationReason, hit: LimitHit | None, failure: ProviderFailure | None = None
) -> str:
    """The first sentence of the final assistant message of a run that did not complete."""
    if reason is TerminationReason.TOOL_BUDGET_VIOLATION:
        return VIOLATION_MESSAGE
    if reason is TerminationReason.PROVIDER_ERROR and failure is not None:
        return f"Stopped: {model_problem(failure)}."
    if hit is None or hit.metric not in _GAUGED:
        stopped = _STOPPED.get(reason, f"Stopped ({reason.value}).")
        if reason is TerminationReason.NO_PROGRESS and hit is not None and hit.pattern:
            return f"{stopped.removesuffix('.')} ({hit.pattern})."
        return stopped
    cap = _spending_cap(hit)
    if cap is not None:
        return f"Stopped: {_cap_reached(cap[0], hit)}."
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


def final_message(
    reason: TerminationReason,
    hit: LimitHit | None,
    text: str,
    *,
    failure: ProviderFailure | None = None,
) -> str:
    """The final assistant message: the explanation, then whatever had been written."""
    if reason is TerminationReason.COMPLETED:
        return text
    explanation = stop_explanation(reason, hit, failure)
    text = text.strip()
    if reason is TerminationReason.TOOL_BUDGET_VIOLATION:
        return f"{explanation}\n\n{text}" if text else explanation
    if text:
        return f"{explanation} Here is what I found so far:\n\n{text}"
    if hit is not None and _spending_cap(hit) is not None and hit.limit <= 0:
        return explanation  # it never started: no steps to point at
    return f"{explanation} I had not written an answer yet; the steps I took are shown above."


def stop_notice(
    reason: TerminationReason, hit: LimitHit | None, failure: ProviderFailure | None = None
) -> str:
    """The System message at the end of a run that did not complete: what was counted,
    how many, against what, and what the user can do."""
    if reason is TerminationReason.PROVIDER_ERROR and failure is not None:
        return provider_notice(failure, hit)
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
    cap = _spending_cap(hit) if hit is not None else None
    if cap is not None and hit is not None:
        # Another round would meet the same cap: say when it renews instead of Continue.
        name, note = cap
        reached = _cap_reached(name, hit)
        reached = reached[0].upper() + reached[1:]
        return f"{reached}; {note}." if note else f"{reached}."
    base = stop_explanation(reason, hit).removeprefix("Stopped: ")
    base = base[0].upper() + base[1:]
    return f"{base} Press Continue to give the Oracle another round."


def _counted(reason: TerminationReason, hit: LimitHit) -> str:
    limit = f"limit {number(hit.metric, hit.limit)}"
    if reason is TerminationReason.NO_PROGRESS:
        return f"Stopped making progress: {hit.pattern or 'the same steps repeated'} ({limit})."
    if reason is TerminationReason.TOOL_ERRORS:
        return f"Stopped: {number(hit.metric, hit.value)} tool calls failed in a row ({limit})."
    if reason is TerminationReason.PROVIDER_ERROR:
        return f"The model call failed on {_attempts(hit)}."
    return f"Stopped ({reason.value}): {figures(hit.metric, hit.value, hit.limit)}."


# --- spending caps larger than one run ---------------------------------------------


def spending_cap(name: str, note: str = "") -> str:
    """A spending cap's name and note in the older joined form ("name; note"), as
    agents/tree.py still passes it as a cost hit's `detail`: `LimitHit` takes them apart
    into `cap` and `detail`. New code sets `LimitHit(cap=name, detail=note)`."""
    return f"{name}{CAP_NOTE_SEPARATOR}{note}" if note else name


def at_spending_cap(hit: LimitHit | None) -> bool:
    """Whether a run ended at a spending cap larger than one run (a daily one)."""
    return hit is not None and _spending_cap(hit) is not None


def _spending_cap(hit: LimitHit) -> tuple[str, str] | None:
    """(name, note) of the spending cap a cost hit was reached at; None for the run's own."""
    if hit.metric != Metric.COST or not hit.cap:
        return None
    return hit.cap, hit.detail


def _cap_reached(name: str, hit: LimitHit) -> str:
    """'the daily spending cap for your account ($2.00) is used up', or what this run
    spent of what was left of it."""
    if hit.limit <= 0:
        return f"{name} is used up"
    used = f"{number(hit.metric, hit.value)} of the {number(hit.metric, hit.limit)} that was left"
    if hit.projected:
        return f"the next model call would pass {name}: this run has used {used} of it"
    return f"reached {name}: this run used {used} of it"


# --- a model that could not answer -------------------------------------------------

_PROBLEMS = {
    ModelProblem.PROVIDER_FAILED: "the model provider failed",
    ModelProblem.UNREACHABLE: "the connection to the model provider failed",
    ModelProblem.RATE_LIMITED: "the model provider turned the calls away as too many",
    ModelProblem.AUTH: "the provider refused the API key",
    ModelProblem.UNKNOWN_MODEL: "the provider does not know the model `{model}`",
    ModelProblem.CONTEXT_TOO_LONG: "the provider rejected the request",
    ModelProblem.BAD_REQUEST: "the provider rejected the request",
    ModelProblem.FAILED: "the model call failed",
}
_PROBLEM_CAUSES = {
    ModelProblem.CONTEXT_TOO_LONG: "the conversation is too long for the model's context",
}
_WHAT_HELPS = {
    ModelProblem.RATE_LIMITED: "Wait a little, then press Continue to try again.",
    ModelProblem.AUTH: "Check the key in the server's settings or pick another model.",
    ModelProblem.UNKNOWN_MODEL: "Pick another model in Settings.",
    ModelProblem.CONTEXT_TOO_LONG: (
        "Start a new conversation or pick a model with a longer context in Settings."
    ),
    ModelProblem.BAD_REQUEST: "Pick another model in Settings.",
}


def model_problem(failure: ProviderFailure) -> str:
    """What went wrong, in plain words: 'the provider refused the API key'."""
    return _PROBLEMS[failure.kind].format(model=failure.model)


def provider_notice(failure: ProviderFailure, hit: LimitHit | None) -> str:
    """The System message when the model could not answer: the kind and status, the
    attempts when retrying could help, and what to do. Never the provider's own words."""
    what = model_problem(failure)
    status = f" ({failure.status})" if failure.status else ""
    tries = f" on {_attempts(hit)}" if hit is not None and not failure.kind.needs_settings else ""
    cause = f": {_PROBLEM_CAUSES[failure.kind]}" if failure.kind in _PROBLEM_CAUSES else ""
    helps = _WHAT_HELPS.get(failure.kind, "Press Continue to try again.")
    return f"{what[0].upper()}{what[1:]}{status}{tries}{cause}. {helps}"


def _attempts(hit: LimitHit) -> str:
    return f"{number(hit.metric, hit.value)} of {number(hit.metric, hit.limit)} attempts"


def pause_notice(hit: LimitHit | None, reason: TerminationReason) -> str:
    """The System message when a run pauses at a limit."""
    what = (
        f"the {limit_name(hit.metric)} ({figures(hit.metric, hit.value, hit.limit)})"
        if hit is not None
        else reason.value
    )
    return f"Paused at {what}. Continue to go on with a fresh round, or Stop to end the run."


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


# A tool call the user declined, as the model reads it (SPEC 6a).
DECLINED = "Error: The user declined this call."
# The result of a call that still waited for approval when the run was stopped.
NOT_ANSWERED = "Not run: the run was stopped before you answered."


def approval_notice(calls: list[dict[str, Any]]) -> str:
    """The System message of a run that waits for the user to approve tool calls."""
    lines = []
    for call in calls:
        where = f" (MCP server {call['server']})" if call.get("server") else ""
        shown = json.dumps(call.get("arguments"), ensure_ascii=False, sort_keys=True)
        if len(shown) > 1000:
            shown = shown[:1000] + "…"
        lines.append(f"{call['name']}{where} with {shown}")
    asked = (
        "this tool call, which needs"
        if len(calls) == 1
        else f"these {len(calls)} tool calls, which need"
    )
    return (
        f"The Oracle wants to make {asked} your approval: "
        + "; ".join(lines)
        + ". Approve to run, or Deny to tell the Oracle you declined; the run waits meanwhile."
    )
