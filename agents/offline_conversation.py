"""What the conversation tells the offline model: the latest question, the tool calls
made for it and their results, and whether it already said how to configure a model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.model import Message

Call = tuple[str, str, str]  # id, tool name, JSON arguments


@dataclass(frozen=True)
class Step:
    """A tool call made for the current question, with its result once it came (a
    result that never came counts as a failure)."""

    name: str
    result: str | None

    @property
    def failed(self) -> bool:
        return self.result is None or self.result.startswith("Error")


def next_call(messages: Sequence[Message], name: str, arguments: dict[str, Any]) -> Call:
    """The next tool call, with an id no earlier call in the conversation has."""
    made = sum(len(message.get("tool_calls") or ()) for message in messages)
    return f"offline_call_{made + 1}", name, json.dumps(arguments)


def steps_since_question(messages: Sequence[Message]) -> list[Step]:
    """The tool calls made (and answered) since the latest user message."""
    results: dict[str, str] = {}
    calls: list[tuple[str, str]] = []
    for message in messages[_last_user_index(messages) + 1 :]:
        if message["role"] == "tool":
            results[str(message.get("tool_call_id"))] = str(message.get("content") or "")
        for wire in message.get("tool_calls") or ():
            calls.append((wire["id"], wire["function"]["name"]))
    return [Step(name, results.get(call_id)) for call_id, name in calls]


def said_before(messages: Sequence[Message], text: str) -> bool:
    """Whether an earlier answer in the conversation already said `text`."""
    return any(
        message["role"] == "assistant" and text in str(message.get("content") or "")
        for message in messages
    )


def last_user_text(messages: Sequence[Message]) -> str:
    """The latest user message ('' when there is none)."""
    index = _last_user_index(messages)
    return str(messages[index].get("content") or "") if index >= 0 else ""


def _last_user_index(messages: Sequence[Message]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "user":
            return index
    return -1
