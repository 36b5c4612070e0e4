"""A scripted in-process model: each call plays the next scripted response.

It sits behind the same `Model` interface as LiteLLM, so the loop cannot tell
it from a provider. Responses can stream text in chunks, ask for tool calls,
report usage, wait, fail, or hang until the run stops them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.clock import Clock
from agents.model import (
    FinishPart,
    Message,
    ModelError,
    ModelProblem,
    ModelRequest,
    StreamPart,
    TextDelta,
    ToolCallPart,
    UsagePart,
    content_text,
)


@dataclass(frozen=True)
class Call:
    """A scripted tool call; `arguments` may be a dict or raw (possibly broken) JSON text."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """One scripted model response."""

    text: str | Sequence[str] = ()
    calls: Sequence[Call] = ()
    usage: tuple[int, int] | None = (50, 10)
    delay: float = 0.0  # before the first part, in seconds of the run's clock
    chunk_delay: float = 0.0  # between text chunks
    advance_clock: float = 0.0  # jump the clock forward this much during the call
    error: ModelError | None = None  # raised after `error_after_chunks` chunks
    error_after_chunks: int = 0
    hang: bool = False  # after the text, keep streaming dots until stopped
    finish_reason: str | None = None  # e.g. "length"; by default "tool_calls" or "stop"


@dataclass(frozen=True)
class RecordedCall:
    """What the model was asked: the messages of the call and the names of the tools."""

    messages: list[Message]
    tools: list[str] | None


Script = Sequence[Reply] | Callable[[int, ModelRequest], Reply]


class ScriptedModel:
    """Plays `script` (a list of replies, or a function of the call index and request)."""

    def __init__(
        self,
        script: Script,
        *,
        name: str = "scripted/test",
        price_per_token: tuple[float, float] = (0.0, 0.0),
        clock: Clock | None = None,
        record: bool = True,
    ) -> None:
        self._script = script
        self._name = name
        self._prices = price_per_token
        self._clock = clock or Clock()
        self._record = record
        self.calls: list[RecordedCall] = []
        self.closed_streams = 0
        self.active = 0
        self._count = 0

    @property
    def name(self) -> str:
        return self._name

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return sum(len(content_text(message.get("content"))) // 4 + 4 for message in messages)

    def price(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens * self._prices[0] + completion_tokens * self._prices[1]

    def _next_reply(self, request: ModelRequest) -> Reply:
        index = self._count
        self._count += 1
        if callable(self._script):
            return self._script(index, request)
        if index >= len(self._script):
            raise ModelError("the scripted model has no more replies", kind=ModelProblem.FAILED)
        return self._script[index]

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        if self._record:
            tools = [t["function"]["name"] for t in request.tools] if request.tools else None
            self.calls.append(RecordedCall(list(request.messages), tools))
        reply = self._next_reply(request)
        self.active += 1
        try:
            async for part in self._play(reply):
                yield part
        finally:
            self.active -= 1
            self.closed_streams += 1

    async def _play(self, reply: Reply) -> AsyncGenerator[StreamPart, None]:
        if reply.advance_clock:
            self._clock.advance(reply.advance_clock)
        if reply.delay:
            await self._clock.sleep(reply.delay)
        chunks = [reply.text] if isinstance(reply.text, str) else list(reply.text)
        for index, chunk in enumerate(chunks):
            if reply.error is not None and index == reply.error_after_chunks:
                raise reply.error
            if index and reply.chunk_delay:
                await self._clock.sleep(reply.chunk_delay)
            yield TextDelta(chunk)
        if reply.error is not None:
            raise reply.error
        while reply.hang:
            await self._clock.sleep(reply.chunk_delay or 0.05)
            yield TextDelta(".")
        for number, call in enumerate(reply.calls):
            arguments = call.arguments
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
            yield ToolCallPart(f"call_{self._count}_{number}", call.name, raw)
        if reply.usage is not None:
            yield UsagePart(*reply.usage)
        yield FinishPart(reply.finish_reason or ("tool_calls" if reply.calls else "stop"))


def tool_loop(
    name: str, arguments_for: Callable[[int], dict[str, Any]]
) -> Callable[[int, ModelRequest], Reply]:
    """A script that calls tool `name` on every call (arguments from the call index),
    and writes a summary when the tools are taken away (wind-down)."""

    def script(index: int, request: ModelRequest) -> Reply:
        if request.tools is None:
            return Reply(text="Summary: here is what the tools told me.")
        return Reply(calls=[Call(name, arguments_for(index))])

    return script
