"""The event vocabulary shared by the CLI, the SSE stream and the WebSocket (SPEC 8).

Every event is a JSON-ready dict with `type` and a per-run increasing `seq`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any

Event = dict[str, Any]
EventSink = Callable[[Event], Awaitable[None]]

# The reason `run.paused` gives when tool calls wait for the user's approval.
APPROVAL = "approval"


class EventType(StrEnum):
    """The event types, exactly as they go over the wire."""

    RUN_STARTED = "run.started"
    ASSISTANT_DELTA = "assistant.delta"
    ASSISTANT_MESSAGE = "assistant.message"
    TOOL_CALL = "tool.call"
    TOOL_RESULT = "tool.result"
    # A call refused before it ran at one of the operator's bounds (`agents.tools.Refusal`:
    # its reason, metric, value and limit), after its `tool.result`; for the limit log.
    TOOL_REFUSED = "tool.refused"
    TOOL_PROGRESS = "tool.progress"
    TOOL_APPROVAL_REQUESTED = "tool.approval_requested"
    TOOL_APPROVAL_GIVEN = "tool.approval_given"
    SYSTEM_NOTICE = "system.notice"
    BUDGET_EXTENDED = "budget.extended"
    RUN_PAUSED = "run.paused"
    RUN_RESUMED = "run.resumed"
    RUN_FINISHED = "run.finished"
    # The context window (agents.context): this call's prompt against it, a request
    # shortened to fit it (with the summary made, if one was), a request refused as too long.
    CONTEXT_USED = "context.used"
    CONTEXT_COMPACTED = "context.compacted"
    CONTEXT_REFUSED = "context.refused"


async def discard_events(event: Event) -> None:
    """An event sink that drops everything."""


class EventCollector:
    """An event sink that keeps every event (tests, benchmarks, simple callers)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of_type(self, event_type: str) -> list[Event]:
        """The events of one type, in order."""
        return [event for event in self.events if event["type"] == event_type]

    def types(self) -> list[str]:
        """The type of every event, in order."""
        return [event["type"] for event in self.events]
