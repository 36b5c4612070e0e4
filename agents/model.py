"""The model interface the loop talks to: a request in, a stream of parts out.

LiteLLM, the offline model and the scripted test model all sit behind it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any, Protocol

Message = dict[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    """One model call. `messages` is the run's history itself (with the images the user
    attached beside their messages, `agents.attachments.with_pictures`): read it, never
    mutate it."""

    messages: Sequence[Message]
    tools: Sequence[dict[str, Any]] | None
    max_tokens: int | None = None  # the longest reply wanted (a compaction's summary)


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

    @cached_property
    def shown_arguments(self) -> Any:
        """The arguments parsed for display (events): the raw text when it is not JSON."""
        try:
            return json.loads(self.arguments) if self.arguments.strip() else {}
        except json.JSONDecodeError:
            return self.arguments


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


def content_text(content: Any) -> str:
    """A message's content as text: a list of content parts gives its text parts (an
    image has none), anything else its string ('' for none)."""
    if isinstance(content, list):
        return "\n".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return str(content or "")


def image_parts(content: Any) -> int:
    """How many images a message's content holds (content parts of type `image_url`)."""
    if not isinstance(content, list):
        return 0
    return sum(isinstance(part, dict) and part.get("type") == "image_url" for part in content)


class ModelProblem(StrEnum):
    """What kind of failure a model call met, as the user is told it (`problem` in events).

    The kind decides what can help: the first three may pass, so the run retries the call
    (and Continue may work later); another key, model or request is needed for the rest.
    """

    PROVIDER_FAILED = "provider_failed"  # the provider answered with a server error (5xx)
    UNREACHABLE = "unreachable"  # no connection, no answer in time, or the stream broke
    RATE_LIMITED = "rate_limited"  # too many calls (429)
    AUTH = "auth"  # the key was refused (401, 403)
    UNKNOWN_MODEL = "unknown_model"  # the provider does not know the model (404)
    CONTEXT_TOO_LONG = "context_too_long"  # the request was rejected: too long for the model
    BAD_REQUEST = "bad_request"  # the request was rejected for another reason (4xx)
    FAILED = "failed"  # anything else: not retried, but Continue may still help

    @property
    def transient(self) -> bool:
        """Whether the same call may succeed if made again (it is retried at once)."""
        return self in _TRANSIENT_PROBLEMS

    @property
    def needs_settings(self) -> bool:
        """Whether only another key, model or request can help (Continue cannot)."""
        return self in _SETTINGS_PROBLEMS


_TRANSIENT_PROBLEMS = {
    ModelProblem.PROVIDER_FAILED,
    ModelProblem.UNREACHABLE,
    ModelProblem.RATE_LIMITED,
}
_SETTINGS_PROBLEMS = {
    ModelProblem.AUTH,
    ModelProblem.UNKNOWN_MODEL,
    ModelProblem.CONTEXT_TOO_LONG,
    ModelProblem.BAD_REQUEST,
}


class ModelError(Exception):
    """A model call failed. The message is the provider's own words, for the log and staff;
    users are told the `kind` and `status`. Transient kinds are retried inside the run's
    time limit."""

    def __init__(
        self,
        detail: str,
        *,
        kind: ModelProblem,
        status: int | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(detail)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        return self.kind.transient


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
