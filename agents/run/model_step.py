"""Asking the model: one call, streamed as it comes (retried when the provider fails
for a while), its usage counted, its answer added to the history, and the tool calls
it asks for handed on.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from agents import wording
from agents.events import EventType
from agents.model import (
    FinishPart,
    Message,
    ModelError,
    ModelProblem,
    ModelRequest,
    TextDelta,
    ToolCallPart,
    UsagePart,
)
from agents.run import compaction
from agents.run.context import RunContext
from agents.run.stopping import time_warning, time_warning_at, until_stopped
from agents.state import LastResponse, LimitHit, Metric, ProviderFailure


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


async def request_model(run: RunContext) -> list[ToolCallPart]:
    """One model call; the tool calls to run next (none when the step ends without)."""
    state = run.state
    wind_down = state.wind_down_reason is not None
    for hint in state.pending_hints:
        state.messages.append({"role": "system", "content": hint})
    state.pending_hints.clear()
    tools = None if wind_down else (run.deps.tools.schemas or None)
    state.round.iterations += 1
    state.total.iterations += 1
    assert state.call_limits is not None, "on_turn_start sets the call limits"
    run.deadline = run.clock.now() + state.call_limits.seconds
    run.turn_start = (state.round.tokens, state.round.cost_usd)

    streamed = await _call_within_window(run, tools)
    if streamed is None:
        return []  # a compaction call was stopped, or the request cannot fit: the tree ends it
    record_usage(run, streamed)
    if streamed.usage is not None and state.context.prompt_tokens:
        # How the provider counts against how we do, for the next calls' fitting.
        state.context.calibrate(
            streamed.usage.prompt_tokens, round(state.context.prompt_tokens / run.ratio)
        )
    if not take_response(run, streamed, wind_down):
        return []
    await run.emit(
        EventType.ASSISTANT_MESSAGE,
        text=run.unemitted_text,
        tool_calls=[_event_call(call) for call in streamed.tool_calls],
        final=False,
    )
    run.unemitted_text = ""
    if run.on_checkpoint is not None:
        # The step is decided and its tools not yet run: a lost worker's run
        # resumes by running them, without asking the model again.
        run.tick()
        await run.on_checkpoint(state)
    return streamed.tool_calls


async def _call_within_window(
    run: RunContext, tools: Sequence[dict[str, Any]] | None
) -> Streamed | None:
    """The call, its messages fitted to the model's window; a refusal for length is
    learnt from and the call made again once, shortened. None when it cannot be made."""
    messages = await compaction.fit(run, tools)
    if messages is None:
        return None
    streamed = await call_model(run, ModelRequest(messages=messages, tools=tools))
    if streamed.refusal is None:
        return streamed
    sent = run.state.context.prompt_tokens or run.count_all(messages)
    messages = await compaction.after_refusal(run, streamed.refusal, sent, tools)
    if messages is None:
        return None
    streamed = await call_model(run, ModelRequest(messages=messages, tools=tools))
    if streamed.refusal is not None:
        compaction.refused_again(run, streamed.refusal, run.state.context.prompt_tokens)
        return None
    return streamed


def take_response(run: RunContext, streamed: Streamed, wind_down: bool) -> bool:
    """Add the response to the history and to the answer so far; whether its tool
    calls are to run."""
    state = run.state
    continued = state.last_response is not None and state.last_response.cut_off
    will_run_tools = bool(streamed.tool_calls) and not wind_down and not streamed.interrupted
    # An answer the model's own output limit cut off is not finished: the next
    # iteration asks it to go on, and what it writes joins the same answer.
    cut_off = streamed.finish_reason == "length" and not (
        streamed.tool_calls or streamed.interrupted or wind_down
    )
    message: Message = {"role": "assistant", "content": streamed.text or None}
    if will_run_tools:
        message["tool_calls"] = [_wire_call(call) for call in streamed.tool_calls]
    if streamed.text or will_run_tools:
        state.messages.append(message)
    if streamed.usage is not None:
        # The provider's figures replace the estimate of everything so far.
        run.context_tokens = streamed.usage.prompt_tokens + streamed.usage.completion_tokens
        run.counted_messages = len(state.messages)
    state.last_response = LastResponse(
        had_tool_calls=bool(streamed.tool_calls),
        interrupted=streamed.interrupted,
        wind_down=wind_down,
        text=streamed.text,
        cut_off=cut_off,
        continued=continued,
    )
    run.unemitted_text = (run.unemitted_text if continued else "") + streamed.text
    if cut_off:
        state.pending_hints.append(wording.CUT_OFF_HINT)
    return will_run_tools


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


def record_usage(run: RunContext, streamed: Streamed) -> None:
    """Count the call's tokens and cost: the provider's figures, or estimates without."""
    state = run.state
    if streamed.usage is not None:
        prompt, completion = streamed.usage.prompt_tokens, streamed.usage.completion_tokens
    else:
        # No figures from the provider (the call was cut short): use the estimates.
        prompt = (
            state.estimated_prompt_tokens if streamed.streamed_chars or streamed.tool_calls else 0
        )
        completion = estimate_text_tokens(streamed.streamed_chars)
    state.add_usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=run.model.price(prompt, completion) if prompt or completion else 0.0,
    )


def count_call(run: RunContext, streamed: Streamed, prompt_tokens: int) -> None:
    """Count a call that is not the next step's (a compaction): the provider's figures,
    or estimates without."""
    if streamed.usage is not None:
        prompt, completion = streamed.usage.prompt_tokens, streamed.usage.completion_tokens
    elif streamed.refusal is not None:
        prompt, completion = 0, 0  # a refused request costs nothing
    else:
        prompt, completion = prompt_tokens, estimate_text_tokens(streamed.streamed_chars)
    run.state.add_usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=run.model.price(prompt, completion) if prompt or completion else 0.0,
    )


def estimate_text_tokens(chars: int) -> int:
    """About four characters a token in English; only used until the provider's figures
    come."""
    return (chars + 3) // 4


def _wire_call(call: ToolCallPart) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def _event_call(call: ToolCallPart) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.shown_arguments}
