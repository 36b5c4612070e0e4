"""How a run ends, as events: the final message, the System notice, `run.finished`.

The loop ends runs this way, and so does the web side when a worker is lost (it
has no engine running): one shape, written once.
"""

from __future__ import annotations

from typing import Any

from agents import wording
from agents.events import Event, EventType
from agents.state import FailureClass, LimitHit, ProviderFailure, TerminationReason

SPENDING_CAP = "spending_cap"  # the `problem` of a run ended at a daily spending cap


def ending_events(
    reason: TerminationReason,
    *,
    hit: LimitHit | None,
    final_text: str,
    counters: dict[str, Any],
    failure_class: FailureClass | None,
    notice: str | None = None,
    failure: ProviderFailure | None = None,
    instructions: str = "",
) -> list[Event]:
    """The closing events of a run, without their `seq`. `notice` replaces the usual
    System message (the web side explains a lost worker in its own words).

    A run the model could not answer carries the kind of failure as `problem`, for the
    page to offer what can help; the provider's own words go with the notice as `detail`,
    kept for staff and never shown in the chat. A run ended at a daily spending cap has
    the problem `spending_cap`: Continue cannot help until the cap renews. A run that
    worked under the user's custom instructions says which (`instructions`)."""
    problem = failure.kind.value if failure else None
    if problem is None and wording.at_spending_cap(hit):
        problem = SPENDING_CAP
    events: list[Event] = [
        {"type": EventType.ASSISTANT_MESSAGE, "text": final_text, "tool_calls": [], "final": True}
    ]
    if reason is not TerminationReason.COMPLETED:
        events.append(
            {
                "type": EventType.SYSTEM_NOTICE,
                "severity": severity(reason),
                "metric": hit.metric if hit else None,
                "value": hit.value if hit else None,
                "limit": hit.limit if hit else None,
                "text": notice or wording.stop_notice(reason, hit, failure),
                "reason": reason.value,
                "problem": problem,
                "detail": failure.detail if failure else None,
                **(hit.facts() if hit else {}),  # the stuck pattern, the spending cap
            }
        )
    events.append(
        {
            "type": EventType.RUN_FINISHED,
            "reason": reason.value,
            "failure_class": failure_class.value if failure_class else None,
            "problem": problem,
            **({"metric": hit.metric} if hit else {}),  # the limit it ended at, if one
            **counters,
            "final_text": final_text,
            **({"instructions": instructions} if instructions else {}),
        }
    )
    return events


def severity(reason: TerminationReason) -> str:
    """How the ending's System message is shown: the user's own stop is no warning."""
    if reason in (TerminationReason.PROVIDER_ERROR, TerminationReason.INTERRUPTED):
        return "error"
    return "info" if reason is TerminationReason.CANCELLED else "warning"
