"""Models through LiteLLM: the request, the reader of its stream, prices from LiteLLM's
bundled map, a failed call as a `ModelError`.

How a stream's chunks become parts is `agents.litellm_stream`; what kind of problem a
failed call was, `agents.litellm_errors`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any

# Never fetch the price map over the network: use the copy bundled with LiteLLM.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx
import litellm
from litellm.llms.openai.chat.gpt_transformation import OpenAIChatCompletionStreamingHandler

from agents.config import TOOL_ARGUMENTS_MAX_BYTES
from agents.context.window import ContextWindow, WindowSource
from agents.litellm_errors import problem_of, retry_after
from agents.litellm_stream import Chunk, EmptyStream, chunks_of, events_of, parts
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
    image_parts,
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
# What an image costs when the tokenizer is unknown: a 1024-pixel square at OpenAI's
# "high" detail (its base 85 tokens and 170 a tile), rather than its base64 text.
IMAGE_TOKENS_GUESS = 765


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
        max_tool_argument_bytes: int = TOOL_ARGUMENTS_MAX_BYTES,
    ) -> None:
        self.model = model
        # A tool call's arguments past this are not read further (`litellm_stream.parts`).
        self.max_tool_argument_bytes = max_tool_argument_bytes
        # Seconds to leave the provider's stream unread once caught up with it (see
        # `agents.litellm_stream.events_of`); None or 0: read every word as it comes.
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
            # An unknown tokenizer must not stop a run: fall back to ~4 characters a token
            # (an image's guessed, not its base64 text's).
            return sum(_rough_tokens(message) for message in messages)

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
        if request.max_tokens:
            kwargs["max_tokens"] = request.max_tokens
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as error:
            raise _model_error(error) from error
        empty = False
        try:
            chunks = _provider_chunks(response, self.read_pause)
            async for part in parts(chunks, self.max_tool_argument_bytes):
                yield part
        except EmptyStream:
            empty = True
        except ModelError:
            raise
        except Exception as error:
            raise _model_error(error) from error
        finally:
            # Closing the wrapper closes the HTTP stream to the provider.
            await response.aclose()
        if empty:  # asked again once the empty stream is closed, not in its shadow
            async for part in _unstreamed(kwargs):
                yield part


async def _unstreamed(kwargs: dict[str, Any]) -> AsyncGenerator[StreamPart, None]:
    """A stream that came empty, asked again without streaming: the provider's error
    then comes as an error (a request over the window as the refusal it is), or else
    its answer comes whole. Once, and only for a stream with nothing in it."""
    asked = {key: value for key, value in kwargs.items() if key != "stream_options"}
    try:
        response = await litellm.acompletion(**{**asked, "stream": False})
    except Exception as error:
        raise _model_error(error) from error
    choice = response.choices[0]
    if choice.message.content:
        yield TextDelta(choice.message.content)
    for index, call in enumerate(choice.message.tool_calls or []):
        function = call.function
        yield ToolCallPart(
            call.id or f"call_{index}", function.name or "", function.arguments or ""
        )
    usage = getattr(response, "usage", None)
    if usage is not None:
        yield UsagePart(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))
    yield FinishPart(choice.finish_reason or "stop")


def _rough_tokens(message: Message) -> int:
    content = message.get("content")
    text = json.dumps({**message, "content": content_text(content)})
    return len(text) // 4 + IMAGE_TOKENS_GUESS * image_parts(content)


@functools.cache
def known_window(model: str) -> ContextWindow | None:
    """The context window LiteLLM's bundled table gives `model` (`max_input_tokens`,
    and `max_output_tokens` for the reply's room); None for a model it does not know."""
    try:
        info = litellm.get_model_info(model=model)
    except Exception:
        return None
    tokens = info.get("max_input_tokens") or info.get("max_tokens")
    if not tokens:
        return None
    output = info.get("max_output_tokens")
    return ContextWindow(int(tokens), int(output) if output else None, WindowSource.LITELLM)


@functools.cache
def sees_images(model: str) -> bool:
    """Whether LiteLLM says `model` takes images (vision); False for a model it does not
    know. Kept for each model once looked up, as its prices are."""
    try:
        return bool(litellm.supports_vision(model=model))
    except Exception:
        return False


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
    events from the HTTP response LiteLLM opened (`events_of`): the call, its
    headers, errors and retries stay LiteLLM's, and a word costs one `json.loads`
    instead of two pydantic objects (bench/README.md). An error event goes through
    LiteLLM's own parser, so it raises what LiteLLM raises. Other providers (the
    openai SDK's stream, Anthropic's, ...) keep the wrapper. The response is closed
    by the caller either way (`response.aclose()`).
    """
    stream = getattr(response, "completion_stream", None)
    http = getattr(stream, "http_response", None)
    if type(stream) is OpenAIChatCompletionStreamingHandler and isinstance(http, httpx.Response):
        return events_of(stream, http, read_pause)
    return chunks_of(response)


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
    kind, status = problem_of(error)
    detail = f"{type(error).__name__}: {error}"
    if kind is ModelProblem.UNREACHABLE and status is None:
        # Each transport words it its own way ("Cannot connect to host ..."): say it once.
        detail = f"The connection to the provider failed or timed out. {detail}"
    logger.warning("model call failed (%s, status %s): %s", kind.value, status, detail)
    return ModelError(detail[:2000], kind=kind, status=status, retry_after=retry_after(error))
