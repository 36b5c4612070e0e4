"""What a tool call comes to: its result as the model and the user see it, what a tool
may return, and the errors a tool raises (a refusal at one of the operator's bounds
among them). Importable from `agents.tools` too."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ToolError(Exception):
    """Raised by a tool to report a clean error message to the model."""


@dataclass(frozen=True)
class Refusal:
    """Why a call was refused before it ran, at one of the operator's bounds: the reason,
    and the figure that passed its limit (for the limit log)."""

    reason: str  # e.g. "arguments_too_large", "subagents_per_run"
    metric: str  # what was measured: "argument_bytes", "subagents", "subagent_depth"
    value: int
    limit: int


class ToolRefused(ToolError):
    """Raised by a tool that refuses a call at one of the operator's bounds: an error
    result for the model, and a refusal for the limit log."""

    def __init__(self, message: str, refusal: Refusal) -> None:
        super().__init__(message)
        self.refusal = refusal


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call, as the model and the user see it."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    ok: bool
    content: str
    # What only the user is shown (an MCP tool's images): {"type", "mime_type", "data"}.
    attachments: tuple[dict[str, Any], ...] = ()
    refusal: Refusal | None = None  # refused before it ran, at one of the operator's bounds


@dataclass(frozen=True)
class ToolOutput:
    """What a tool may return instead of a plain value: its text, whether it succeeded
    (an MCP tool's `isError`) and attachments for the user."""

    text: str
    ok: bool = True
    attachments: list[dict[str, Any]] = field(default_factory=list)
