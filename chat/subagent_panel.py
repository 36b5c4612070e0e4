"""A subagent's panel inside its parent's `delegate` step: its type and task, its own
gauges against its own limits, its steps, and how it ended."""

from __future__ import annotations

import json
from typing import Any

from django.utils.safestring import SafeString

from agents.events import EventType
from chat.gauges import gauge_counters, gauge_rows
from chat.partials import reason_badge, render_partial
from runs import subagents


def subagent_context(step_id: str, sub: dict[str, Any]) -> dict[str, Any]:
    """A subagent inside its `delegate` step: its type and task, its own gauges against
    its own limits, its steps, and how it ended."""
    limits = dict(sub.get("limits") or {})
    limits["max_tool_calls_per_turn"] = limits.get("max_tool_calls")
    status = str(sub.get("status", "running"))
    return {
        "id": f"{step_id}-sub",
        "sub": sub,
        "gauges": gauge_rows(gauge_counters(sub.get("counters") or {}), limits, status=status),
        "badge": reason_badge(str(sub.get("reason", ""))),
        "discarded": status == subagents.DISCARDED,
        "steps": [_subagent_step(step) for step in sub.get("steps") or []],
    }


def subagent_panel(step_id: str, sub: dict[str, Any], *, swap_oob: bool = False) -> SafeString:
    """A subagent's panel (`subagent_context`), redrawn by the live stream."""
    return render_partial("_subagent.html", panel=subagent_context(step_id, sub), swap_oob=swap_oob)


def _subagent_step(step: dict[str, Any]) -> dict[str, Any]:
    """One line of a subagent's steps: a tool call, its result, or a notice."""
    kind = str(step.get("type", ""))
    if kind == EventType.TOOL_CALL:
        arguments = json.dumps(step.get("arguments") or {}, ensure_ascii=False)
        return {"kind": "call", "name": step.get("name", ""), "text": arguments, "ok": None}
    if kind == EventType.TOOL_RESULT:
        ok = bool(step.get("ok"))
        text = f"{'→' if ok else '✗'} {step.get('content', '')}"
        return {"kind": "result", "name": "", "text": text, "ok": ok}
    return {"kind": "notice", "name": "", "text": str(step.get("text", "")), "ok": None}
