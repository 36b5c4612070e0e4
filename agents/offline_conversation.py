"""What the conversation tells the offline model: the latest question, the tool calls
made for it and their results, and whether it already said how to configure a model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.model import Message

Call = tuple[str, str, str]  # id, tool name, JSON arguments


@dataclass(frozen=True)
class Step:
    """A tool call made for the current question, with its result once it came (a
    result that never came counts as a failure), and the call's JSON arguments."""

    name: str
    result: str | None
    arguments: str = field(default="{}", compare=False)

    def answers(self, call: Call) -> bool:
        """Whether this step is `call` made already: the same tool with the same arguments."""
        return self.name == call[1] and _parsed(self.arguments) == _parsed(call[2])

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
    calls: list[Call] = []
    for message in messages[_last_user_index(messages) + 1 :]:
        if message["role"] == "tool":
            results[str(message.get("tool_call_id"))] = str(message.get("content") or "")
        for wire in message.get("tool_calls") or ():
            function = wire["function"]
            calls.append((wire["id"], function["name"], str(function.get("arguments") or "{}")))
    return [Step(name, results.get(call_id), arguments) for call_id, name, arguments in calls]


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


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments


def _last_user_index(messages: Sequence[Message]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "user":
            return index
    return -1
