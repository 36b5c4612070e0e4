"""A subagent's panel in its parent's `delegate` step, folded from `subagent.*` events.

The live view and the saved tool row fold the same events into the same dict, so a
reload shows what the stream showed. A subagent its parent outlived unfinished is
discarded: its steps are dropped and nothing of it stays.
"""

from __future__ import annotations

from typing import Any

from agents.subagents import SubagentEvent

# A long-working subagent shows its latest steps, not all of them.
MAX_SHOWN_STEPS = 40
DISCARDED = "discarded"


def fold(sub: dict[str, Any] | None, event: dict[str, Any]) -> dict[str, Any] | None:
    """The panel after `event` (a `subagent.*` event of this step)."""
    kind = event["type"]
    if kind == SubagentEvent.STARTED:
        return {
            "agent_type": str(event.get("agent_type", "")),
            "task": str(event.get("task", "")),
            "limits": dict(event.get("limits") or {}),
            "counters": {},
            "steps": [],
            "status": "running",
        }
    if sub is None:
        return None
    if kind == SubagentEvent.STEP:
        steps = [*sub.get("steps", []), dict(event.get("event") or {})]
        return {**sub, "steps": steps[-MAX_SHOWN_STEPS:]}
    if kind == SubagentEvent.PROGRESS:
        return {**sub, "counters": dict(event.get("counters") or {})}
    if kind == SubagentEvent.FINISHED:
        reason = str(event.get("reason", ""))
        counters = dict(event.get("counters") or {})
        return {**sub, "status": "finished", "reason": reason, "counters": counters}
    return sub


def discard(sub: dict[str, Any] | None) -> dict[str, Any] | None:
    """The panel of a subagent whose parent stopped first: nothing it did is kept."""
    if sub is None or sub.get("status") != "running":
        return sub
    return {**sub, "status": DISCARDED, "steps": [], "counters": {}}
