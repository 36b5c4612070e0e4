"""Models through LiteLLM: streaming, tool calls, usage, prices from LiteLLM's bundled map."""

from __future__ import annotations

import datetime
import json
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
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
# LiteLLM's aiohttp transport leaves the connection open when a stream is closed
# early; httpx closes it, so a stopped run really hangs up on the provider.
litellm.disable_aiohttp_transport = True
logger = logging.getLogger(__name__)

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
    ) -> None:
        self.model = model
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
            async for part in _parts(_provider_chunks(response)):
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


def _provider_chunks(response: Any) -> AsyncIterator[Any]:
    """The provider's chunks: from LiteLLM's own parser where it speaks OpenAI's protocol.

    For an OpenAI-compatible server (Oracle's route for a server of the operator's own)
    LiteLLM parses each event into a chunk of OpenAI's shape with
    `OpenAIChatCompletionStreamingHandler`. The stream wrapper it hands out around that
    parser builds every chunk again as a new object and, once the stream ends, rebuilds
    the whole response from its chunks and works out its cost, for LiteLLM's own logging
    callbacks. Oracle registers none and prices usage itself, so it reads the parser:
    about a third less time per model call (bench/README.md). What the wrapper adds for
    other providers (the openai SDK's stream, Anthropic's, ...) is kept: their streams go
    through it. The response is closed by the caller either way (`response.aclose()`).
    """
    stream = getattr(response, "completion_stream", None)
    if type(stream) is OpenAIChatCompletionStreamingHandler:
        return aiter(stream)
    return aiter(response)


async def _parts(chunks: AsyncIterator[Any]) -> AsyncGenerator[StreamPart, None]:
    """The provider's chunks as parts: text as it comes, then tool calls, usage and finish.

    The usage comes in a chunk of its own after the finish reason, at the stream's end.
    Past it, LiteLLM's stream wrapper only runs its end-of-stream logging (the whole
    response rebuilt from its chunks a second time, and its cost worked out again),
    which Oracle does not use, so the loop stops there.
    """
    calls: dict[int, dict[str, str]] = {}
    finish_reason: str | None = None
    async for chunk in chunks:
        if isinstance(chunk, dict):
            # LiteLLM's parser marks "data: [DONE]" and events without data with dicts.
            if chunk.get("is_finished"):
                break
            continue
        for choice in (chunk.choices or ())[:1]:
            delta = choice.delta
            if delta is not None and delta.content:
                yield TextDelta(delta.content)
            for call in (delta.tool_calls if delta is not None else None) or ():
                slot = calls.setdefault(call.index or 0, {"id": "", "name": "", "arguments": ""})
                slot["id"] = call.id or slot["id"]
                if call.function is not None:
                    slot["name"] += call.function.name or ""
                    slot["arguments"] += call.function.arguments or ""
            finish_reason = choice.finish_reason or finish_reason
        usage = getattr(chunk, "usage", None)
        if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
            yield UsagePart(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))
            if finish_reason is not None:
                break
    if finish_reason is None:
        raise ModelError("the model's stream ended early", kind=ModelProblem.UNREACHABLE)
    for index, slot in sorted(calls.items()):
        yield ToolCallPart(slot["id"] or f"call_{index}", slot["name"], slot["arguments"])
    yield FinishPart(finish_reason)


def model_prices(model: str) -> tuple[float, float]:
    """USD per prompt token and per completion token, from LiteLLM's bundled map.

    A model without a price costs 0 (SPEC section 2).
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
