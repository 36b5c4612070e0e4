"""What a System message's row keeps of the event that made it, besides its text: a
notice's severity and figures, and a shortened context's figures and summary. The
worker's recorder writes rows with these; the live view draws its messages from the
same, so the page and the stream show one thing."""

from __future__ import annotations

from typing import Any

from agents.state import Metric

# What a System message's row keeps of its `system.notice` event, besides the text. A
# model's failure adds its kind (`problem`) and the provider's own words (`detail`, for
# staff: the chat never shows them).
NOTICE_FIELDS = ("severity", "metric", "value", "limit", "reason", "problem", "detail")
# And the facts a notice carries only when it has them: the pattern a run stopped for no
# progress repeated, the spending cap a run ended at (`LimitHit.facts`).
NOTICE_FACTS = ("pattern", "cap")
# What a System message of a shortened context keeps of its `context.compacted` event.
CONTEXT_FIELDS = ("model", "window", "before", "after", "summarised", "stubbed", "cut",
                  "summary", "covers")  # fmt: skip


def notice_metadata(notice: dict[str, Any]) -> dict[str, Any]:
    """What a System message's row keeps of its `system.notice` event, besides the text."""
    metadata = {key: notice.get(key) for key in NOTICE_FIELDS}
    metadata.update({key: notice[key] for key in NOTICE_FACTS if notice.get(key)})
    return metadata


def compaction_metadata(event: dict[str, Any], *, through_seq: int | None = None) -> dict[str, Any]:
    """What a System message of a shortened context keeps of its `context.compacted`
    event: the figures, and the summary if one was made, with the conversation's last
    message it covers (`through_seq`: a later run sends it in their place)."""
    context = {key: event.get(key) for key in CONTEXT_FIELDS}
    if through_seq is not None:
        context["through_seq"] = through_seq
    return {
        "severity": "info",
        "metric": Metric.CONTEXT.value,
        "value": event.get("after"),
        "limit": event.get("window"),
        "context": context,
    }
