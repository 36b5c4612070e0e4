"""What a compaction call is asked: the instruction, then the older part of the history
as a transcript (after the summary so far, if one was made), in as many parts as the
model's window needs, each part's long messages cut to their head and tail."""

from __future__ import annotations

from collections.abc import Sequence

from agents.context.view import as_text, cut_text, tool_calls_by_id
from agents.model import Message

INSTRUCTION = (
    "You keep a long conversation going within the model's context window. Summarise "
    "the conversation below for the assistant who will continue it without seeing it: "
    "keep every fact, figure, name, decision and tool result that may matter later, what "
    "the user asked and what the assistant answered or found, and any question still "
    "open. Write plain sentences in the conversation's language, with no preamble, in "
    "at most {words} words."
)
SO_FAR = "Summary of the conversation so far:\n{summary}\n\n"
PART = "The conversation{continued}:\n{transcript}"
# Characters a token holds at the least, for the budgets below: English holds about
# four a token; fewer for code, numbers and other scripts.
CHARS_PER_TOKEN = 3


def instruction(summary_tokens: int) -> Message:
    """The compaction call's system message."""
    return {"role": "system", "content": INSTRUCTION.format(words=summary_tokens * 3 // 4)}


def transcript_items(messages: Sequence[Message], start: int, end: int) -> list[str]:
    """Messages `start` to `end` as transcript lines ("User: ..."), notes left out."""
    calls = tool_calls_by_id(messages)
    items = []
    for message in messages[start:end]:
        if message.get("role") == "system":
            continue  # the loop's hints to the model: nothing the user said or found
        speaker, text = as_text(message, calls)
        if text:
            items.append(f"{speaker}: {text}")
    return items


def parts(items: Sequence[str], budget_chars: int) -> list[str]:
    """The items in parts of at most `budget_chars` characters each (a long item cut to
    half of that, its head and tail kept), in order."""
    cap = max(budget_chars // 2, 200)
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for item in items:
        text = cut_text(item, cap, "message")
        if current and size + len(text) > budget_chars:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(text)
        size += len(text) + 2
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def request_messages(summary_tokens: int, summary: str, part: str, first: bool) -> list[Message]:
    """One compaction call's messages: fold `part` of the transcript into `summary`."""
    so_far = SO_FAR.format(summary=summary) if summary else ""
    continued = "" if first and not summary else ", continued"
    return [
        instruction(summary_tokens),
        {"role": "user", "content": so_far + PART.format(continued=continued, transcript=part)},
    ]
