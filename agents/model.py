"""The model interface the loop talks to: a request in, a stream of parts out.

LiteLLM, the offline model and the scripted test model all sit behind it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

Message = dict[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    """One model call. `messages` is the run's history itself: read it, never mutate it."""

    messages: Sequence[Message]
    tools: Sequence[dict[str, Any]] | None


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed assistant text."""

    text: str


@dataclass(frozen=True)
class ToolCallPart:
    """One complete tool call the model asked for; `arguments` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class UsagePart:
    """Token usage as the provider reported it."""

    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class FinishPart:
    """The provider's finish reason (`stop`, `tool_calls`, `length`, ...)."""

    reason: str


StreamPart = TextDelta | ToolCallPart | UsagePart | FinishPart


class ModelError(Exception):
    """A model call failed. `transient` errors are retried inside the run's time limit."""

    def __init__(self, message: str, *, transient: bool, retry_after: float | None = None):
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after


class Model(Protocol):
    """What the loop needs from a model."""

    @property
    def name(self) -> str:
        """The model's label, shown to users (e.g. `oracle/offline`)."""
        ...

    def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        """Stream one response. Closing the iterator must close the provider connection."""
        ...

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Estimate the prompt tokens of `messages` (used before a call)."""
        ...

    def price(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Cost in USD of the given usage; 0 for a model without a price."""
        ...
