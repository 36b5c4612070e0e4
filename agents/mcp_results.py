"""An MCP tool's result as the engine's `ToolOutput`: its text, images kept for the chat,
the whole cut to a size the model can take."""

from __future__ import annotations

import base64
import json
from typing import Any

from agents.tools import ToolOutput

DEFAULT_MAX_RESULT_CHARS = 100_000
MAX_IMAGE_BYTES = 2_000_000  # an attachment larger than this is described, not kept


def tool_output(result: Any, *, max_chars: int = DEFAULT_MAX_RESULT_CHARS) -> ToolOutput:
    """A tool result from the SDK's `CallToolResult`: text, structured content, resource
    links and embedded text resources as text; images kept as attachments for the chat;
    the whole cut at `max_chars` with a note to the model. `isError` is a tool error."""
    parts: list[str] = []
    attachments: list[dict[str, Any]] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            size = len(block.data) * 3 // 4
            if size <= MAX_IMAGE_BYTES and _is_base64(block.data):
                attachments.append({"type": "image", "mime_type": block.mime_type,
                                    "data": block.data})  # fmt: skip
                parts.append(f"[image ({block.mime_type}, {size:,} bytes), shown to the user]")
            else:
                parts.append(f"[image ({block.mime_type}, {size:,} bytes), too large to show]")
        elif kind == "audio":
            parts.append(f"[audio ({block.mime_type}), not shown]")
        elif kind == "resource_link":
            line = f"[resource {block.name}: {block.uri}]"
            if getattr(block, "description", None):
                line += f" {block.description}"
            parts.append(line)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"[resource {resource.uri}]\n{text}")
            else:
                parts.append(f"[resource {resource.uri} ({resource.mime_type or 'binary'})]")
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(parts):
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    text = "\n".join(parts)
    if len(text) > max_chars:
        text = (
            f"{text[:max_chars]}\n[Cut by Oracle: the result had {len(text):,} characters and "
            f"only the first {max_chars:,} are shown. Ask for less (a narrower query, a page) "
            "if you need the rest.]"
        )
    if result.is_error:
        return ToolOutput(text or "the tool reported an error", ok=False, attachments=attachments)
    return ToolOutput(text, attachments=attachments)


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        return False
    return True
