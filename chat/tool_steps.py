"""A tool call's step in the conversation: its name and state, arguments, result, an MCP
tool's progress and pictures, and a delegate step's subagent panel. The page's history
composes `tool_step_context`; the live stream sends `tool_step` and `tool_status`."""

from __future__ import annotations

import json
import re
from typing import Any

from django.utils.safestring import SafeString

from chat.fragments import oob
from chat.partials import render_partial
from chat.subagent_panel import subagent_context


def tool_step_context(
    element_id: str,
    name: str,
    arguments: Any,
    result: str | None,
    ok: bool | None,
    *,
    subagent: dict[str, Any] | None = None,
    attachments: Any = None,
    waiting: str = "",
    not_run: str = "",
) -> dict[str, Any]:
    """A tool call; `ok` None while it runs (`waiting` "approval" while it waits for the
    user's); `not_run` says why a call never ran (the run stopped first, the tool-call
    budget, the user declined it or never answered), which is no error of the tool. A
    `delegate` step holds its subagent; an MCP tool's step, its pictures."""
    shown = json.dumps(arguments, ensure_ascii=False, indent=1) if arguments else "{}"
    return {
        "id": element_id,
        "name": name,
        "arguments": shown,
        "result": result,
        "ok": ok,
        "waiting": waiting,
        "not_run": NOT_RUN.get(not_run, ""),
        "pictures": pictures(attachments, name),
        "agent": arguments.get("agent_type")
        if name == "delegate" and isinstance(arguments, dict)
        else "",
        "subagent": subagent_context(element_id, subagent) if subagent else None,
    }


# What a step that never ran shows instead of "error", by the engine's `not_run`.
NOT_RUN = {
    "stopped": "stopped",
    "budget": "not run",
    "declined": "declined",
    "unanswered": "not answered",
    "expired": "expired",
}


def tool_step(*step: Any, swap_oob: bool = False, **details: Any) -> SafeString:
    """A tool step as the live stream adds or redraws it: the arguments of
    `tool_step_context`, drawn."""
    context = tool_step_context(*step, **details)
    return render_partial("_tool_step.html", step=context, swap_oob=swap_oob)


def tool_status(element_id: str, *, ok: bool | None, waiting: str = "") -> str:
    """A tool step's state alone, redrawn in its summary."""
    return oob(
        f"#{element_id}-status",
        "innerHTML",
        render_partial("_tool_status.html", ok=ok, waiting=waiting),
    )


# The pictures a tool step shows, inline as data: URLs: only kinds every browser draws
# and none that runs script (an SVG could). agents.mcp_results checked the data is base64.
PICTURE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def pictures(attachments: Any, name: str) -> list[dict[str, str]]:
    """The images among a tool result's attachments, as the page shows them."""
    shown = []
    for attachment in attachments if isinstance(attachments, list) else []:
        if not isinstance(attachment, dict) or attachment.get("type") != "image":
            continue
        kind, data = attachment.get("mime_type"), attachment.get("data")
        if kind in PICTURE_TYPES and isinstance(data, str) and _BASE64.fullmatch(data):
            shown.append({"src": f"data:{kind};base64,{data}", "alt": f"A picture from {name}"})
    return shown


def tool_progress(progress: Any, total: Any, message: Any) -> str:
    """An MCP tool's last progress report, as its step shows it: "3 of 10: message"."""
    text = str(message or "").strip()
    if isinstance(progress, int | float) and not isinstance(progress, bool):
        figure = f"{progress:g}"
        if isinstance(total, int | float) and not isinstance(total, bool) and total > 0:
            figure = f"{progress:g} of {total:g}"
        text = f"{figure}: {text}" if text else figure
    return text[:200]
