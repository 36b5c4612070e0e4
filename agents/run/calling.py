"""Making one model call: streamed as it comes (its words shown as they come, unless
the call is not the answer), retried when the provider fails for a while, stopped by
Stop and the time limit, and counted; a refusal for length is handed back to shorten.
"""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import dataclass, field

from agents.events import EventType
from agents.model import (
    FinishPart,
    ModelError,
    ModelProblem,
    ModelRequest,
    TextDelta,
    ToolCallPart,
    UsagePart,
)
from agents.run.context import RunContext
from agents.run.stopping import time_warning, time_warning_at, until_stopped
from agents.state import LimitHit, Metric, ProviderFailure


@dataclass
class Streamed:
    """What one model call produced, complete or not."""

    text_parts: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallPart] = field(default_factory=list)
    usage: UsagePart | None = None
    finish_reason: str | None = None
    interrupted: bool = False
    streamed_chars: int = 0
    refusal: ModelError | None = None  # refused as too long for the model's context

    @property
    def text(self) -> str:
        return "".join(self.text_parts)


async def call_model(
    run: RunContext, request: ModelRequest, *, quiet: bool = False, prompt_tokens: int | None = None
) -> Streamed:
    """Stream the model's response, retrying a passing failure; what came, whole or not.
    `quiet`: its text is not the answer (a compaction's summary), so it is not streamed
    to the user; `prompt_tokens`: its prompt's size, when not the next call's estimate.
    A refusal for length comes back as the `refusal` for the caller to shorten."""
    attempt = 0
    while True:
        streamed = Streamed()
        try:
            cause = await until_stopped(
                run, _consume(run, request, streamed, quiet=quiet, prompt_tokens=prompt_tokens)
            )
        except ModelError as error:
            if error.kind is ModelProblem.CONTEXT_TOO_LONG and not streamed.text_parts:
                streamed.refusal = error
                return streamed
            retry_in = _retry_delay(run, error, attempt, streamed)
            if retry_in is None:
                run.state.provider_failure = ProviderFailure(
                    error.kind, error.status, run.model.name, str(error)
                )
                run.state.limit_hit = LimitHit(
                    Metric.ATTEMPTS, attempt + 1, run.deps.max_retries + 1
                )
                streamed.interrupted = True
                return streamed
            attempt += 1
            if await until_stopped(run, run.clock.sleep(retry_in)) is not None:
                streamed.interrupted = True
                return streamed
            continue
        if cause is not None:
            streamed.interrupted = True
        return streamed


def _retry_delay(
    run: RunContext, error: ModelError, attempt: int, streamed: Streamed
) -> float | None:
    """Seconds to wait before retrying, or None when the error ends the run."""
    if not error.transient or streamed.text_parts or attempt >= run.deps.max_retries:
        return None
    delay = error.retry_after
    if delay is None:
        delay = run.deps.retry_base_delay * 2**attempt
    if run.clock.now() + delay >= run.deadline:
        return None  # the retry would land past the run's time limit
    return delay


async def _consume(
    run: RunContext,
    request: ModelRequest,
    streamed: Streamed,
    *,
    quiet: bool = False,
    prompt_tokens: int | None = None,
) -> None:
    limits = run.state.call_limits
    assert limits is not None
    prompt_estimate = run.state.estimated_prompt_tokens if prompt_tokens is None else prompt_tokens
    warn_at = time_warning_at(run)  # then a clock reading per part, no more
    async with aclosing(run.model.stream(request)) as parts:
        async for part in parts:
            if warn_at is not None and run.clock.now() >= warn_at:
                await time_warning(run)
                warn_at = None
            if isinstance(part, TextDelta):
                if not part.text:
                    continue
                streamed.text_parts.append(part.text)
                streamed.streamed_chars += len(part.text)
                if not quiet:
                    await run.emit(EventType.ASSISTANT_DELTA, text=part.text)
                # Token and cost budgets mid-response: this chunk is kept, then stop.
                completion = estimate_text_tokens(streamed.streamed_chars)
                if limits.passed_mid_call(
                    prompt_estimate + completion, run.model.price(prompt_estimate, completion)
                ):
                    streamed.interrupted = True
                    return
            elif isinstance(part, ToolCallPart):
                streamed.tool_calls.append(part)
            elif isinstance(part, UsagePart):
                streamed.usage = part
            elif isinstance(part, FinishPart):
                streamed.finish_reason = part.reason


def record_usage(run: RunContext, streamed: Streamed, prompt_tokens: int | None = None) -> None:
    """Count the call's tokens and cost: the provider's figures, or estimates without
    (`prompt_tokens`: its prompt's, when not the next call's estimate). A call that ended
    before its first word (stopped, or refused as too long) is counted as nothing."""
    state = run.state
    if streamed.usage is not None:
        prompt, completion = streamed.usage.prompt_tokens, streamed.usage.completion_tokens
    else:
        # No figures from the provider (the call was cut short): use the estimates.
        estimate = state.estimated_prompt_tokens if prompt_tokens is None else prompt_tokens
        prompt = estimate if streamed.streamed_chars or streamed.tool_calls else 0
        completion = estimate_text_tokens(streamed.streamed_chars)
    state.add_usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=run.model.price(prompt, completion) if prompt or completion else 0.0,
    )


def estimate_text_tokens(chars: int) -> int:
    """About four characters a token in English; only used until the provider's figures
    come."""
    return (chars + 3) // 4
