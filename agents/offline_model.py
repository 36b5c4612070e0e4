"""The offline model: a small deterministic policy behind the model interface.

It answers when no model is configured, so Oracle works with no network. It
really uses the tools (calculator for arithmetic, current_time for the time)
and says plainly that it is the offline model and how to configure a real one.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, Sequence

from agents.model import (
    FinishPart,
    Message,
    ModelRequest,
    StreamPart,
    TextDelta,
    ToolCallPart,
    UsagePart,
)

OFFLINE_MODEL_NAME = "oracle/offline"

HOW_TO_CONFIGURE = (
    "To get real answers, configure a model: set ORACLE_MODEL to a LiteLLM model string, "
    "e.g. ORACLE_MODEL=openai/gpt-4o-mini with OPENAI_API_KEY set."
)

_WORDS = {
    "plus": "+",
    "minus": "-",
    "times": "*",
    "multiplied by": "*",
    "divided by": "/",
    "over": "/",
    "to the power of": "**",
}
_ARITHMETIC = re.compile(r"[-+(]*\d[\d.,\s()+\-*/%^x]*")
_TIME_WORDS = re.compile(r"\b(time|date|day|today|clock|hour)\b", re.IGNORECASE)


class OfflineModel:
    """Deterministic stand-in for a real model (named `oracle/offline`)."""

    @property
    def name(self) -> str:
        return OFFLINE_MODEL_NAME

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return sum(len(str(message.get("content") or "")) // 4 + 4 for message in messages)

    def price(self, prompt_tokens: int, completion_tokens: int) -> float:
        return 0.0

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        call, text = self._decide(request)
        if call is not None:
            yield ToolCallPart(*call)
        for chunk in _chunks(text):
            await asyncio.sleep(0.01)  # stream like a real model, in a few pieces
            yield TextDelta(chunk)
        prompt = self.count_tokens(request.messages[-3:])
        yield UsagePart(prompt, len(text) // 4 + 1)
        yield FinishPart("tool_calls" if call is not None else "stop")

    def _decide(self, request: ModelRequest) -> tuple[tuple[str, str, str] | None, str]:
        messages = request.messages
        tools = {t["function"]["name"] for t in request.tools or ()}
        last = messages[-1]
        if last["role"] == "tool":
            return None, self._answer_from_tool(messages)
        question = _last_user_text(messages)
        expression = find_arithmetic(question)
        if expression is not None and "calculator" in tools:
            arguments = json.dumps({"expression": expression})
            return ("offline_call_1", "calculator", arguments), ""
        if _TIME_WORDS.search(question) and "current_time" in tools:
            return ("offline_call_1", "current_time", "{}"), ""
        return None, (
            "I am the Oracle's offline model, so I can only do arithmetic and tell the time. "
            + HOW_TO_CONFIGURE
        )

    def _answer_from_tool(self, messages: Sequence[Message]) -> str:
        result = str(messages[-1].get("content", ""))
        call_name = ""
        for message in reversed(messages):
            if message["role"] == "assistant" and message.get("tool_calls"):
                call_name = message["tool_calls"][0]["function"]["name"]
                arguments = json.loads(message["tool_calls"][0]["function"]["arguments"] or "{}")
                break
        else:
            arguments = {}
        if result.startswith("Error"):
            answer = f"The {call_name or 'tool'} could not help: {result}"
        elif call_name == "calculator":
            answer = (
                f"{arguments.get('expression', 'It')} = {result} (computed with the calculator)."
            )
        else:
            answer = f"It is {result}."
        return f"{answer} (Answered by the offline model. {HOW_TO_CONFIGURE})"


def find_arithmetic(text: str) -> str | None:
    """The arithmetic expression in a question, e.g. '17*23' in 'what is 17*23?'."""
    lowered = text.lower()
    for word, symbol in _WORDS.items():
        lowered = lowered.replace(f" {word} ", f" {symbol} ")
    best = None
    for match in _ARITHMETIC.finditer(lowered):
        candidate = match.group().strip().rstrip(".,").replace("x", "*").replace(",", "")
        is_arithmetic = re.search(r"\d\s*(\*\*|[-+*/%^])\s*[-(]*\d", candidate)
        if is_arithmetic and (best is None or len(candidate) > len(best)):
            best = candidate
    return best


def _last_user_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message["role"] == "user":
            return str(message.get("content") or "")
    return ""


def _chunks(text: str, pieces: int = 4) -> list[str]:
    if not text:
        return []
    words = text.split(" ")
    size = max(1, -(-len(words) // pieces))
    parts = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [part + (" " if n < len(parts) - 1 else "") for n, part in enumerate(parts)]
