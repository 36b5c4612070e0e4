"""An MCP tool's result as the engine's `ToolOutput`: its text, images kept for the chat
(each no larger than 2 MB, at most 4 images and 4 MB a result and 10 MB of images a run:
fixed here, as the chat's pages must stay light), the whole cut to a size the model can
take, and a result the transport stopped reading (ORACLE_TOOL_RESULT_MAX_BYTES) said so."""

from __future__ import annotations

import base64
import json
from typing import Any

from agents.mcp_lines import CUT_META
from agents.tools import ToolOutput

DEFAULT_MAX_RESULT_CHARS = 100_000
MAX_IMAGE_BYTES = 2_000_000  # an attachment larger than this is described, not kept
MAX_RESULT_IMAGES = 4  # the images one result shows; the others are named, not kept
MAX_RESULT_IMAGE_BYTES = 4_000_000
MAX_RUN_IMAGE_BYTES = 10_000_000  # every result of one run together


def tool_output(
    result: Any,
    *,
    max_chars: int = DEFAULT_MAX_RESULT_CHARS,
    run_images: dict[str, int] | None = None,
) -> ToolOutput:
    """A tool result from the SDK's `CallToolResult`: text, structured content, resource
    links and embedded text resources as text; images kept as attachments for the chat,
    within the caps of a result and of its run (`run_images`, the run's count so far,
    kept in its state, is added to); the whole cut at `max_chars` with a note to the
    model, and a result cut by the transport noted too. `isError` is a tool error."""
    parts: list[str] = []
    attachments: list[dict[str, Any]] = []
    images = _Images(run_images if run_images is not None else {})
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            size = len(block.data) * 3 // 4 - block.data[-2:].count("=")  # decoded
            said = f"image ({block.mime_type}, {size:,} bytes)"
            left_out = images.refusal(size, block.data)
            if left_out:
                parts.append(f"[{said}, {left_out}]")
            else:
                attachments.append({"type": "image", "mime_type": block.mime_type,
                                    "data": block.data})  # fmt: skip
                parts.append(f"[{said}, shown to the user]")
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
    read = ((getattr(result, "meta", None) or {}).get(CUT_META) or {}).get("read")
    if read:
        text = (
            f"{text[:max_chars]}\n[Cut by Oracle: the result was larger than {read:,} bytes "
            "(ORACLE_TOOL_RESULT_MAX_BYTES), so Oracle stopped reading it there and only its "
            "beginning is shown. Ask for less (a narrower query, a page) if you need the rest.]"
        )
    elif len(text) > max_chars:
        text = (
            f"{text[:max_chars]}\n[Cut by Oracle: the result had {len(text):,} characters and "
            f"only the first {max_chars:,} are shown. Ask for less (a narrower query, a page) "
            "if you need the rest.]"
        )
    if result.is_error:
        return ToolOutput(text or "the tool reported an error", ok=False, attachments=attachments)
    return ToolOutput(text, attachments=attachments)


class _Images:
    """The images of one result kept so far, against its caps and its run's."""

    def __init__(self, run: dict[str, int]) -> None:
        self.run = run
        self.count = 0
        self.bytes = 0

    def refusal(self, size: int, data: str) -> str:
        """Why an image of `size` bytes is left out ("" when it is kept, and counted)."""
        if size > MAX_IMAGE_BYTES or not _is_base64(data):
            return "too large to show"
        if self.count >= MAX_RESULT_IMAGES or self.bytes + size > MAX_RESULT_IMAGE_BYTES:
            return (
                f"left out: a result shows at most {MAX_RESULT_IMAGES} images and "
                f"{MAX_RESULT_IMAGE_BYTES:,} bytes of them"
            )
        if self.run.get("bytes", 0) + size > MAX_RUN_IMAGE_BYTES:
            return (
                f"left out: this run has shown {self.run.get('bytes', 0):,} bytes of images, "
                f"and a run shows at most {MAX_RUN_IMAGE_BYTES:,}"
            )
        self.count, self.bytes = self.count + 1, self.bytes + size
        self.run["bytes"] = self.run.get("bytes", 0) + size
        self.run["count"] = self.run.get("count", 0) + 1
        return ""


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        return False
    return True
