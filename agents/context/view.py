"""What is sent to the model of a run's history, once the history no longer fits: a
summary in place of its older part, stubs in place of older tool results, older images
named rather than shown, and a message too big for what is left cut to its head and
tail. The history itself is never changed: a `Shape` says how it is shortened, and
`render` makes the messages to send.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.attachments import Picture, with_pictures
from agents.model import Message, content_text

SUMMARY_INTRO = (
    "[Summary of the earlier conversation. The older messages were summarised to fit "
    "the model's context; the user still sees them whole.]\n\n"
)
_STUB = (
    "[The result of {call} ({size:,} characters) is left out here to fit the model's "
    "context. Call the tool again if you need it.]"
)
_CUT = (
    "\n\n[… {cut:,} characters of this {what} are left out here to fit the model's context …]\n\n"
)
_IMAGES_DROPPED = (
    "\n\n[The images attached here are no longer shown, to save room in the model's "
    "context; their documents are named above.]"
)
ARGUMENTS_SHOWN = 160  # characters of a call's arguments a stub repeats


@dataclass
class Shape:
    """How the history is shortened for one call. `summary_end`: the messages from the
    first after the system prompt up to this index are replaced by `summary` (the
    newest user message, if among them, is still sent, after the summary); `stubbed`:
    indices of tool results sent as stubs; `cut`: characters kept of a message, by
    index; `pictures_from`: user messages before this index are sent without images."""

    summary: str = ""
    summary_end: int = 0
    stubbed: set[int] = field(default_factory=set)
    cut: dict[int, int] = field(default_factory=dict)
    pictures_from: int = 0


def body_start(messages: Sequence[Message]) -> int:
    """The index of the first message after the system prompt."""
    return 1 if messages and messages[0].get("role") == "system" else 0


def newest_user(messages: Sequence[Message]) -> int:
    """The index of the newest user message (the question the run answers), or -1."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            return index
    return -1


def newest_step(messages: Sequence[Message]) -> int:
    """Where the newest step begins (its assistant message asking for tools), or the
    newest user message when no step followed it: what stays whole to the end."""
    question = newest_user(messages)
    for index in range(len(messages) - 1, question, -1):
        message = messages[index]
        if message.get("role") == "assistant" and message.get("tool_calls"):
            return index
    return max(question, body_start(messages))


def split_points(messages: Sequence[Message], start: int, end: int) -> list[int]:
    """The indices in [start, end] before which the history may be cut in two: never
    between a step's call and its results (a provider refuses a result without it)."""
    return [
        index
        for index in range(start, end + 1)
        if index == len(messages) or messages[index].get("role") != "tool"
    ]


def tool_calls_by_id(messages: Sequence[Message]) -> dict[str, tuple[str, str]]:
    """Each tool call's name and arguments, by call id, from the assistant messages."""
    calls: dict[str, tuple[str, str]] = {}
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for wire in message.get("tool_calls") or []:
            function = wire.get("function") or {}
            calls[str(wire.get("id"))] = (
                str(function.get("name") or "a tool"),
                str(function.get("arguments") or ""),
            )
    return calls


def stub(message: Message, calls: Mapping[str, tuple[str, str]]) -> Message:
    """A tool result as a stub naming its call, its arguments and its size."""
    name, arguments = calls.get(str(message.get("tool_call_id")), ("a tool", ""))
    arguments = " ".join(arguments.split())
    if len(arguments) > ARGUMENTS_SHOWN:
        arguments = arguments[: ARGUMENTS_SHOWN - 1] + "…"
    size = len(content_text(message.get("content")))
    return {**message, "content": _STUB.format(call=f"{name}({arguments})", size=size)}


def cut_text(text: str, keep: int, what: str) -> str:
    """`text` cut to about `keep` characters, its head and tail kept, with a note in
    place of the middle saying how much is left out."""
    if len(text) <= keep:
        return text
    head = keep * 2 // 3
    tail = keep - head
    note = _CUT.format(cut=len(text) - keep, what=what)
    return f"{text[:head]}{note}{text[len(text) - tail :]}" if tail else f"{text[:head]}{note}"


def cut(message: Message, keep: int) -> Message:
    """A message cut to its head and tail (its text: a message with images keeps them)."""
    what = "tool result" if message.get("role") == "tool" else "message"
    content = message.get("content")
    if isinstance(content, list):
        text = cut_text(content_text(content), keep, what)
        rest = [p for p in content if not (isinstance(p, dict) and p.get("type") == "text")]
        return {**message, "content": [{"type": "text", "text": text}, *rest]}
    return {**message, "content": cut_text(str(content or ""), keep, what)}


def summary_message(summary: str) -> Message:
    """The summary as the model reads it, where the older messages were."""
    return {"role": "system", "content": SUMMARY_INTRO + summary}


def render_one(
    messages: Sequence[Message],
    index: int,
    shape: Shape,
    calls: Mapping[str, tuple[str, str]],
    pictures: Mapping[int, Picture],
) -> Message:
    """Message `index` of the history as `shape` sends it: stubbed or cut, and with the
    images it attached (a user message before `pictures_from` names them instead)."""
    message = messages[index]
    if index in shape.stubbed:
        message = stub(message, calls)
    elif index in shape.cut:
        message = cut(message, shape.cut[index])
    shown = with_pictures([message], pictures)[0]
    if shown is message or index >= shape.pictures_from or message.get("role") != "user":
        return shown
    return {**message, "content": str(message["content"]) + _IMAGES_DROPPED}


def size_of(message: Message) -> int:
    """A message's characters (its text and arguments), to choose what to cut first."""
    calls = message.get("tool_calls")
    return len(content_text(message.get("content"))) + (len(json.dumps(calls)) if calls else 0)


def as_text(message: Message, calls: Mapping[str, tuple[str, str]]) -> tuple[str, str]:
    """Who spoke and what, for a transcript: ("User", text), ("Tool lookup(x)", result)."""
    role = str(message.get("role"))
    text = content_text(message.get("content")).strip()
    if role == "tool":
        name, arguments = calls.get(str(message.get("tool_call_id")), ("a tool", ""))
        return f"Result of {name}({arguments})", text
    if role == "assistant" and message.get("tool_calls"):
        asked = ", ".join(
            f"{(w.get('function') or {}).get('name')}({(w.get('function') or {}).get('arguments')})"
            for w in message["tool_calls"]
        )
        return "Assistant", f"{text}\n[called {asked}]".strip()
    speaker: dict[str, Any] = {"user": "User", "assistant": "Assistant", "system": "Note"}
    return speaker.get(role, role.title()), text
