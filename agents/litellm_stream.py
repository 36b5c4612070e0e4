"""A provider's streamed answer, chunk by chunk, as the engine's parts.

Two readers make the same chunks (text, tool call pieces, finish reason, usage):
`events_of` reads an OpenAI-compatible server's `data:` events straight from the HTTP
response, `chunks_of` reads LiteLLM's stream wrapper (every provider it speaks);
`parts` makes them text deltas, tool calls, usage and the finish. Which reader a
response gets is `agents.litellm_model`'s choice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from agents.model import (
    FinishPart,
    ModelError,
    ModelProblem,
    StreamPart,
    TextDelta,
    ToolCallPart,
    UsagePart,
)

if TYPE_CHECKING:
    import httpx
    from litellm.llms.openai.chat.gpt_transformation import OpenAIChatCompletionStreamingHandler

logger = logging.getLogger(__name__)

# What a chunk carries: text, tool call pieces (index, id, name, arguments), the finish
# reason and the usage (prompt and completion tokens).
Chunk = tuple[str, list[tuple[int, str, str, str]], str | None, tuple[int, int] | None]


async def events_of(
    parser: OpenAIChatCompletionStreamingHandler,
    response: httpx.Response,
    read_pause: Callable[[], float] | None = None,
) -> AsyncGenerator[Chunk, None]:
    """The `data:` events of an OpenAI-compatible stream, read as bytes come: a network
    read that holds several events costs one pass. Ends at `[DONE]` or the stream's end.

    With `read_pause`, a stream that has caught up with the provider (its last read
    waited for the network) is left unread for that many seconds: the words that come
    meanwhile wait in the socket and are then taken in one read instead of one each.
    The run host asks for it only when many runs stream, and only until the journal's
    next write, which those words would wait for anyway (`runs.journal.Journal`)."""
    rest = b""
    chunks = aiter(response.aiter_bytes())
    while True:
        asked = time.monotonic()
        try:
            data = await anext(chunks)
        except StopAsyncIteration:
            break
        lines = (rest + data).split(b"\n")
        rest = lines.pop()
        for line in lines:
            event = _event(parser, line)
            if event is _DONE:
                return
            if event is not None:
                yield _from_dict(event)
        if read_pause is not None and time.monotonic() - asked > CAUGHT_UP_SECONDS:
            pause = read_pause()
            if pause > 0:
                await asyncio.sleep(pause)
    event = _event(parser, rest)
    if event is not None and event is not _DONE:
        yield _from_dict(event)


_DONE: dict[str, Any] = {}
# A read that waited longer than this for the network found nothing left to read.
CAUGHT_UP_SECONDS = 0.001


def _event(parser: OpenAIChatCompletionStreamingHandler, line: bytes) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith(b"data:"):
        return None  # a blank line between events, a comment, an `event:` name
    payload = line[5:].strip()
    if payload == b"[DONE]":
        return _DONE
    try:
        event = json.loads(payload)
    except ValueError:
        return None  # LiteLLM skips what is not JSON too
    if not isinstance(event, dict):
        return None
    if event.get("error"):
        parser.chunk_parser(chunk=event)  # raises LiteLLM's OpenAIError, with the status
    return event


def _from_dict(event: dict[str, Any]) -> Chunk:
    text, calls, finish = "", [], None
    choices = event.get("choices") or ()
    if choices and isinstance(choices[0], dict):
        choice = choices[0]
        delta = choice.get("delta") or {}
        text = delta.get("content") or ""
        for call in delta.get("tool_calls") or ():
            function = call.get("function") or {}
            calls.append(
                (
                    call.get("index") or 0,
                    call.get("id") or "",
                    function.get("name") or "",
                    function.get("arguments") or "",
                )
            )
        finish = choice.get("finish_reason")
    usage = event.get("usage")
    counts = None
    if isinstance(usage, dict):
        counts = (int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    return text, calls, finish, counts


async def chunks_of(response: Any) -> AsyncGenerator[Chunk, None]:
    """Chunks from LiteLLM's stream wrapper (every provider it speaks)."""
    async for chunk in response:
        if isinstance(chunk, dict):
            # LiteLLM's parser marks "data: [DONE]" and events without data with dicts.
            if chunk.get("is_finished"):
                return
            continue
        text, calls, finish = "", [], None
        for choice in (chunk.choices or ())[:1]:
            delta = choice.delta
            if delta is not None:
                text = delta.content or ""
                for call in delta.tool_calls or ():
                    function = call.function
                    name = (function.name or "") if function is not None else ""
                    arguments = (function.arguments or "") if function is not None else ""
                    calls.append((call.index or 0, call.id or "", name, arguments))
            finish = choice.finish_reason
        usage = getattr(chunk, "usage", None)
        counts = None
        if usage is not None:
            counts = (int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))
        yield text, calls, finish, counts


class EmptyStream(ModelError):
    """The provider said yes (200) and sent nothing: not one event, no end. What
    llama-cpp-python's server answers a streamed request longer than its window (the
    error goes to its log, after the headers went out)."""


async def parts(
    chunks: AsyncIterator[Chunk], max_argument_bytes: int | None = None
) -> AsyncGenerator[StreamPart, None]:
    """The provider's chunks as parts: text as it comes, then tool calls, usage and finish.

    The usage comes in a chunk of its own after the finish reason, at the stream's end.
    Past it, LiteLLM's stream wrapper only runs its end-of-stream logging (the whole
    response rebuilt from its chunks a second time, and its cost worked out again),
    which Oracle does not use, so the loop stops there.

    With `max_argument_bytes`, once one tool call's arguments pass it the stream is read
    no further: the text so far and the calls so far come as a finished response, that
    call's arguments cut where reading stopped (over the limit, so the tool registry
    refuses it unread), and the caller closes the stream.
    """
    calls: dict[int, dict[str, str]] = {}
    sizes: dict[int, int] = {}  # bytes of each call's arguments so far
    finish_reason: str | None = None
    empty = True
    limit = max_argument_bytes if max_argument_bytes is not None else float("inf")
    async for text, pieces, finish, usage in chunks:
        empty = False
        if text:
            yield TextDelta(text)
        cut = False
        for index, call_id, name, arguments in pieces:
            slot = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
            slot["id"] = call_id or slot["id"]
            slot["name"] += name
            slot["arguments"] += arguments
            sizes[index] = sizes.get(index, 0) + len(arguments.encode("utf-8", "surrogatepass"))
            cut = cut or sizes[index] > limit
        finish_reason = finish or finish_reason
        if cut:
            logger.warning(
                "stopped reading the model's stream: a tool call's arguments passed %s bytes",
                max_argument_bytes,
            )
            finish_reason = finish_reason or "tool_calls"
            break
        if usage is not None and (usage[0] or usage[1]):
            yield UsagePart(*usage)
            if finish_reason is not None:
                break
    if finish_reason is None and empty:
        raise EmptyStream("the model's stream ended before it began", kind=ModelProblem.UNREACHABLE)
    if finish_reason is None:
        raise ModelError("the model's stream ended early", kind=ModelProblem.UNREACHABLE)
    for index, slot in sorted(calls.items()):
        yield ToolCallPart(slot["id"] or f"call_{index}", slot["name"], slot["arguments"])
    yield FinishPart(finish_reason)
