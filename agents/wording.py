"""What the user and the model are told about limits: every sentence in one place, with
how figures are written (`agents.figures`), a failed model call (`agents.problem_wording`)
and the reasons' labels (`agents.reason_labels`) in modules of their own, importable from
here too."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agents.context import words as context_words
from agents.figures import figures as figures
from agents.figures import limit_name as limit_name
from agents.figures import number as number
from agents.problem_wording import attempts
from agents.problem_wording import model_problem as model_problem
from agents.problem_wording import provider_notice as provider_notice
from agents.reason_labels import REASON_LABELS as REASON_LABELS
from agents.reason_labels import STAFF_REASON_LABELS as STAFF_REASON_LABELS
from agents.reason_labels import reason_label as reason_label
from agents.state import LimitHit, Metric, ProviderFailure, TerminationReason
from agents.tools_share import advice, because

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


def of_round(round_number: int) -> str:
    return f" of round {round_number}" if round_number > 1 else ""


# --- warnings ---------------------------------------------------------------------


def approaching_notice(
    metric: str, value: float, limit: float, *, round_number: int = 1, then: str = ""
) -> str:
    """The System message at a soft warning. `then` says what happens at the limit when
    it is not the end (an extension, a pause); by default the Oracle wraps up."""
    what = f"the {limit_name(metric)}{of_round(round_number)}"
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
    TerminationReason.PAUSE_EXPIRED: "Stopped: the run waited too long for your answer.",
}


def stop_explanation(
    reason: TerminationReason, hit: LimitHit | None, failure: ProviderFailure | None = None
) -> str:
    """The first sentence of the final assistant message of a run that did not complete."""
    if reason is TerminationReason.TOOL_BUDGET_VIOLATION:
        if hit is not None and hit.metric == Metric.ITERATIONS:
            return (
                f"I reached the {limit_name(hit.metric)} "
                f"({figures(hit.metric, hit.value, hit.limit)}) before I could finish: my "
                "last step still asked for tools, which were not run."
            )
        return VIOLATION_MESSAGE
    if reason is TerminationReason.PROVIDER_ERROR and failure is not None:
        return f"Stopped: {model_problem(failure)}."
    if reason is TerminationReason.CONTEXT_WINDOW and hit is not None:
        return context_words.stopped(round(hit.limit), hit.detail)
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
            f"({figures(hit.metric, hit.value, hit.limit)} used){because(hit)}."
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
    found: Sequence[str] = (),
) -> str:
    """The final assistant message: the explanation, then whatever had been written, or
    else what the steps `found` (their results), or else where the steps are."""
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
    if found:
        listed = "\n".join(f"- {result}" for result in found)
        return f"{explanation} I had not written an answer; what my steps found:\n\n{listed}"
    return f"{explanation} I had not written an answer yet; the steps I took are shown above."


def stop_notice(
    reason: TerminationReason, hit: LimitHit | None, failure: ProviderFailure | None = None
) -> str:
    """The System message at the end of a run that did not complete: what was counted,
    how many, against what, and what the user can do."""
    if reason is TerminationReason.PROVIDER_ERROR and failure is not None:
        return provider_notice(failure, hit)
    if reason is TerminationReason.CONTEXT_WINDOW and hit is not None:
        return context_words.stop_notice(round(hit.limit), hit.detail)
    if reason is TerminationReason.CANCELLED:
        return "You stopped the run. Press Continue to let the Oracle go on from here."
    if reason is TerminationReason.PAUSE_EXPIRED:
        return "The wait for your answer expired. Press Continue to let the Oracle go on."
    if hit is not None and hit.metric not in _GAUGED:
        return f"{_counted(reason, hit)} Press Continue to give the Oracle another round."
    if reason is TerminationReason.TOOL_BUDGET_VIOLATION and hit is not None:
        used = figures(hit.metric, hit.value, hit.limit)
        if hit.metric == Metric.ITERATIONS:
            return (
                f"The Oracle reached the {limit_name(hit.metric)} ({used}) and its last "
                "step asked for tools instead of answering. Press Continue to give it "
                "another round."
            )
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
    return f"{base} {advice(hit) or 'Press Continue to give the Oracle another round.'}"


def _counted(reason: TerminationReason, hit: LimitHit) -> str:
    limit = f"limit {number(hit.metric, hit.limit)}"
    if reason is TerminationReason.NO_PROGRESS:
        return f"Stopped making progress: {hit.pattern or 'the same steps repeated'} ({limit})."
    if reason is TerminationReason.TOOL_ERRORS:
        return f"Stopped: {number(hit.metric, hit.value)} tool calls failed in a row ({limit})."
    if reason is TerminationReason.PROVIDER_ERROR:
        return f"The model call failed on {attempts(hit)}."
    return f"Stopped ({reason.value}): {figures(hit.metric, hit.value, hit.limit)}."


# --- spending caps larger than one run ---------------------------------------------


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


def pause_notice(hit: LimitHit | None, reason: TerminationReason) -> str:
    """The System message when a run pauses at a limit."""
    what = (
        f"the {limit_name(hit.metric)} ({figures(hit.metric, hit.value, hit.limit)})"
        if hit is not None
        else reason.value
    )
    return f"Paused at {what}. Continue to go on with a fresh round, or Stop to end the run."


# A tool call the user declined, as the model reads it (SPEC 6a).
DECLINED = "Error: The user declined this call."
# The result of a call that still waited for approval when the run was stopped, or expired.
NOT_ANSWERED = "Not run: the run was stopped before you answered."
EXPIRED = "Not run: the approval expired before you answered."


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
