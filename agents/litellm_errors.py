"""What a failed provider call was: the kind of problem, the provider's HTTP status and
how long it asked to be left alone (Retry-After), from LiteLLM's exceptions."""

from __future__ import annotations

import datetime
import os
from email.utils import parsedate_to_datetime
from typing import Any

# Never fetch the price map over the network: use the copy bundled with LiteLLM (as
# `agents.litellm_model` says too: whichever of the two is imported first loads LiteLLM).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx
import openai
from litellm import exceptions as provider_errors

from agents.model import ModelProblem

# Errors on the way to the provider or back: LiteLLM wraps a refused connection in an
# InternalServerError with a made-up 500, so the cause is looked for in the whole chain.
_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    httpx.TransportError,  # connect, read, timeouts; a stream read by agents.litellm_stream
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


def problem_of(error: Exception) -> tuple[ModelProblem, int | None]:
    """The kind of a failed call and the provider's HTTP status, from LiteLLM's exception
    classes, or the status of an error event read straight from LiteLLM's parser."""
    if isinstance(error, provider_errors.ContextWindowExceededError):
        # The provider's own answer, whatever broke on the way to it before.
        return ModelProblem.CONTEXT_TOO_LONG, getattr(error, "status_code", None)
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


def retry_after(error: Exception) -> float | None:
    """The seconds the provider asked to wait (its Retry-After: seconds or a date), if any."""
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
