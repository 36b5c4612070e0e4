"""Models through LiteLLM: streaming, tool calls, usage, prices from LiteLLM's bundled map."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import importlib
import json
import logging
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from email.utils import parsedate_to_datetime
from typing import Any

# Never fetch the price map over the network: use the copy bundled with LiteLLM.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx
import litellm
import openai
from litellm import exceptions as provider_errors
from litellm.llms.openai.chat.gpt_transformation import OpenAIChatCompletionStreamingHandler

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
)

litellm.suppress_debug_info = True  # no "Give Feedback" banners on stdout
# LiteLLM's aiohttp transport: aiohttp's C parser takes a read's chunks apart and one
# await brings all that came, where httpx's own transport (httpcore, h11, an anyio
# cancel scope a read) passed each word through some ten Python layers; a fifth of
# the worker's CPU a streamed word (bench/README.md). It closes the response when a
# stream ends for any reason, so a stopped run still hangs up on the provider (tests).
litellm.disable_aiohttp_transport = False
logger = logging.getLogger(__name__)

# Loaded by LiteLLM and its transport on a process's first call (see `LiteLLMModel.warm_up`).
_LAZY_TRANSPORT = (
    "litellm.llms.custom_httpx.aiohttp_transport",
    "anyio._backends._asyncio",
    "anyio.streams.tls",
    "litellm._service_logger",
    "litellm.llms.hosted_vllm.chat.transformation",
)

# Errors on the way to the provider or back: LiteLLM wraps a refused connection in an
# InternalServerError with a made-up 500, so the cause is looked for in the whole chain.
_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    httpx.TransportError,  # connect, read, timeouts; a stream from _provider_chunks
    openai.APIConnectionError,  # LiteLLM's APIConnectionError and Timeout are ones too
    ConnectionError,
    TimeoutError,
)
# What providers say when the history is longer than the model's context (LiteLLM maps
# only some of them to ContextWindowExceededError, and none in a stream's error event).
_CONTEXT_TOO_LONG_WORDS = (
    "context length",
    "context window",
    "context_length",
    "context too long",
    "maximum context",
    "prompt is too long",
    "too many tokens",
)
# LiteLLM's exception classes, the most specific first (a context too long is a bad request).
_CLASS_PROBLEMS: tuple[tuple[type[Exception], ModelProblem], ...] = (
    (provider_errors.ContextWindowExceededError, ModelProblem.CONTEXT_TOO_LONG),
    (provider_errors.RateLimitError, ModelProblem.RATE_LIMITED),
    (provider_errors.AuthenticationError, ModelProblem.AUTH),
    (provider_errors.PermissionDeniedError, ModelProblem.AUTH),
    (provider_errors.NotFoundError, ModelProblem.UNKNOWN_MODEL),
    (provider_errors.InternalServerError, ModelProblem.PROVIDER_FAILED),
    (provider_errors.ServiceUnavailableError, ModelProblem.PROVIDER_FAILED),
    (provider_errors.BadRequestError, ModelProblem.BAD_REQUEST),
)
# The same by status, for LiteLLM's other classes (a 403 comes as an APIError) and for an
# error event in a stream read straight from LiteLLM's parser (its OpenAIError has a status).
_STATUS_PROBLEMS = {
    401: ModelProblem.AUTH,
    403: ModelProblem.AUTH,
    404: ModelProblem.UNKNOWN_MODEL,
    408: ModelProblem.UNREACHABLE,
    429: ModelProblem.RATE_LIMITED,
}


class LiteLLMModel:
    """A provider model named by a LiteLLM model string (e.g. `openai/gpt-4o-mini`)."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        request_timeout: float = 600.0,
        read_pause: Callable[[], float] | None = None,
    ) -> None:
        self.model = model
        # Seconds to leave the provider's stream unread once caught up with it (see
        # `_events_of`); None or 0: read every word as it comes.
        self.read_pause = read_pause
        self.api_base = api_base or None
        self.api_key = api_key or None
        self.request_timeout = request_timeout
        self.input_price, self.output_price = model_prices(model)
        self.route = _route(model, self.api_base)

    @property
    def name(self) -> str:
        return self.model

    @property
    def is_priced(self) -> bool:
        """False when LiteLLM has no price for the model (it then costs 0)."""
        return bool(self.input_price or self.output_price)

    def count_tokens(self, messages: Sequence[Message]) -> int:
        try:
            return int(litellm.token_counter(model=self.model, messages=list(messages)))
        except Exception:
            # An unknown tokenizer must not stop a run: fall back to ~4 characters a token.
            return sum(len(json.dumps(message)) // 4 for message in messages)

    def price(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens * self.input_price + completion_tokens * self.output_price

    async def warm_up(self) -> None:
        """Do now what the process's first call would do before its first word: import
        the HTTP transport that LiteLLM loads lazily (its aiohttp transport, anyio's
        asyncio back end) and go once through LiteLLM's own call path with a mock
        answer. The provider is not called. A first call in a cold process took 42 to
        68 ms before its first word, a later one 4 (bench/README.md)."""
        for module in _LAZY_TRANSPORT:
            with contextlib.suppress(ImportError):
                importlib.import_module(module)
        kwargs = {"model": self.route, "api_base": self.api_base, "api_key": self.api_key}
        response = await litellm.acompletion(
            **kwargs, messages=[{"role": "user", "content": "warm up"}], stream=True,
            mock_response="ready",
        )  # fmt: skip
        async for _ in response:
            pass

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        kwargs: dict[str, Any] = {
            "model": self.route,
            "messages": list(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.request_timeout,
            # The run retries itself, inside its own time limit.
            "num_retries": 0,
            "max_retries": 0,
        }
        if request.tools:
            kwargs["tools"] = list(request.tools)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as error:
            raise _model_error(error) from error
        try:
            async for part in _parts(_provider_chunks(response, self.read_pause)):
                yield part
        except ModelError:
            raise
        except Exception as error:
            raise _model_error(error) from error
        finally:
            # Closing the wrapper closes the HTTP stream to the provider.
            await response.aclose()


def _route(model: str, api_base: str | None) -> str:
    """The LiteLLM model string a call goes out with (prices stay those of `model`).

    An `openai/` model on a server of the operator's own (`api_base` set: vLLM,
    Ollama, a gateway) speaks the same protocol, and LiteLLM's `hosted_vllm/`
    route sends it with LiteLLM's own HTTP client instead of the openai SDK, whose
    request building walks the whole history on every call (bench/README.md: about
    3x less time per step at 50 and 200 steps). OpenAI itself keeps the SDK route.
    """
    provider, _, name = model.partition("/")
    if provider == "openai" and name and api_base:
        return f"hosted_vllm/{name}"
    return model


def _provider_chunks(
    response: Any, read_pause: Callable[[], float] | None = None
) -> AsyncIterator[Chunk]:
    """The provider's chunks, each as (text, tool call pieces, finish reason, usage).

    For an OpenAI-compatible server (Oracle's route for a server of the operator's own)
    LiteLLM reads the response's lines and makes each event a `ModelResponseStream`
    with `OpenAIChatCompletionStreamingHandler`; the stream wrapper it hands out then
    builds every chunk again as a new object and, once the stream ends, rebuilds the
    whole response and works out its cost, for LiteLLM's own logging callbacks.
    Oracle registers none and prices usage itself, so for that route it reads the
    events from the HTTP response LiteLLM opened (`_events_of`): the call, its
    headers, errors and retries stay LiteLLM's, and a word costs one `json.loads`
    instead of two pydantic objects (bench/README.md). An error event goes through
    LiteLLM's own parser, so it raises what LiteLLM raises. Other providers (the
    openai SDK's stream, Anthropic's, ...) keep the wrapper. The response is closed
    by the caller either way (`response.aclose()`).
    """
    stream = getattr(response, "completion_stream", None)
    http = getattr(stream, "http_response", None)
    if type(stream) is OpenAIChatCompletionStreamingHandler and isinstance(http, httpx.Response):
        return _events_of(stream, http, read_pause)
    return _chunks_of(response)


# What a chunk carries: text, tool call pieces (index, id, name, arguments), the finish
# reason and the usage (prompt and completion tokens).
Chunk = tuple[str, list[tuple[int, str, str, str]], str | None, tuple[int, int] | None]


async def _events_of(
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
    next write, which those words would wait for anyway (`runs.recorder.Journal`)."""
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


async def _chunks_of(response: Any) -> AsyncGenerator[Chunk, None]:
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


async def _parts(chunks: AsyncIterator[Chunk]) -> AsyncGenerator[StreamPart, None]:
    """The provider's chunks as parts: text as it comes, then tool calls, usage and finish.

    The usage comes in a chunk of its own after the finish reason, at the stream's end.
    Past it, LiteLLM's stream wrapper only runs its end-of-stream logging (the whole
    response rebuilt from its chunks a second time, and its cost worked out again),
    which Oracle does not use, so the loop stops there.
    """
    calls: dict[int, dict[str, str]] = {}
    finish_reason: str | None = None
    async for text, pieces, finish, usage in chunks:
        if text:
            yield TextDelta(text)
        for index, call_id, name, arguments in pieces:
            slot = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
            slot["id"] = call_id or slot["id"]
            slot["name"] += name
            slot["arguments"] += arguments
        finish_reason = finish or finish_reason
        if usage is not None and (usage[0] or usage[1]):
            yield UsagePart(*usage)
            if finish_reason is not None:
                break
    if finish_reason is None:
        raise ModelError("the model's stream ended early", kind=ModelProblem.UNREACHABLE)
    for index, slot in sorted(calls.items()):
        yield ToolCallPart(slot["id"] or f"call_{index}", slot["name"], slot["arguments"])
    yield FinishPart(finish_reason)


@functools.cache
def model_prices(model: str) -> tuple[float, float]:
    """USD per prompt token and per completion token, from LiteLLM's bundled map.

    A model without a price costs 0 (SPEC section 2). Kept for each model once looked
    up: the map is the one bundled with LiteLLM, and each run's model asked for it
    again (two look-ups, about a twentieth of a run's start on the worker).
    """
    try:
        prompt, _ = litellm.cost_per_token(model=model, prompt_tokens=1_000_000)
        _, completion = litellm.cost_per_token(model=model, completion_tokens=1_000_000)
    except Exception:
        return 0.0, 0.0
    return float(prompt) / 1_000_000, float(completion) / 1_000_000


def _model_error(error: Exception) -> ModelError:
    kind, status = _problem(error)
    detail = f"{type(error).__name__}: {error}"
    if kind is ModelProblem.UNREACHABLE and status is None:
        # Each transport words it its own way ("Cannot connect to host ..."): say it once.
        detail = f"The connection to the provider failed or timed out. {detail}"
    logger.warning("model call failed (%s, status %s): %s", kind.value, status, detail)
    return ModelError(detail[:2000], kind=kind, status=status, retry_after=_retry_after(error))


def _problem(error: Exception) -> tuple[ModelProblem, int | None]:
    """The kind of a failed call and the provider's HTTP status, from LiteLLM's exception
    classes, or the status of an error event read straight from LiteLLM's parser."""
    if _lost_connection(error):
        return ModelProblem.UNREACHABLE, None
    status = getattr(error, "status_code", None)
    status = status if isinstance(status, int) else None
    if status in (None, 400, 413) and _says_context_too_long(error):
        return ModelProblem.CONTEXT_TOO_LONG, status
    for kinds, problem in _CLASS_PROBLEMS:
        if isinstance(error, kinds):
            return problem, status
    if status in _STATUS_PROBLEMS:
        return _STATUS_PROBLEMS[status], status
    if status is not None and status >= 500:
        return ModelProblem.PROVIDER_FAILED, status
    if status is not None and status >= 400:
        return ModelProblem.BAD_REQUEST, status
    return ModelProblem.FAILED, status


def _lost_connection(error: BaseException) -> bool:
    """Whether the call failed on the way: no connection, no answer in time, a broken stream."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, _CONNECTION_ERRORS):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _says_context_too_long(error: Exception) -> bool:
    text = str(error).lower()
    return any(words in text for words in _CONTEXT_TOO_LONG_WORDS)


def _retry_after(error: Exception) -> float | None:
    headers: Any = getattr(error, "litellm_response_headers", None)
    if headers is None:
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(value)
        return max((moment - datetime.datetime.now(moment.tzinfo)).total_seconds(), 0.0)
    except (TypeError, ValueError):
        return None
