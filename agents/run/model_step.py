"""Asking the model: one call, streamed as it comes (retried when the provider fails
for a while), its usage counted, its answer added to the history, and the tool calls
it asks for handed on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agents import wording
from agents.events import EventType
from agents.model import (
    Message,
    ModelRequest,
    ToolCallPart,
)
from agents.run import compaction
from agents.run.calling import Streamed as Streamed
from agents.run.calling import call_model, record_usage
from agents.run.context import RunContext
from agents.state import LastResponse
from agents.tool_arguments import kept


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
    if streamed.usage is not None and run.counted_prompt:
        # How the provider counts against how we do, for the next calls' fitting.
        state.context.calibrate(streamed.usage.prompt_tokens, run.counted_prompt)
    if not take_response(run, streamed, wind_down):
        return []
    await run.emit(
        EventType.ASSISTANT_MESSAGE,
        text=run.unemitted_text,
        tool_calls=[_event_call(run, call) for call in streamed.tool_calls],
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
    # Counted whole, as the provider counted it (the tools too), once: a refusal is rare.
    sent = run.count_all(messages) + (run.count_tools() if tools else 0)
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
        message["tool_calls"] = [_wire_call(run, call) for call in streamed.tool_calls]
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


def _wire_call(run: RunContext, call: ToolCallPart) -> dict[str, Any]:
    """The call as the history keeps it: arguments over the tools' limit (refused unread)
    are not sent to the model again, a note stands in their place."""
    arguments = kept(call.arguments, run.deps.tools.max_argument_bytes)
    function = {"name": call.name, "arguments": arguments}
    return {"id": call.id, "type": "function", "function": function}


def _event_call(run: RunContext, call: ToolCallPart) -> dict[str, Any]:
    arguments = kept(call.arguments, run.deps.tools.max_argument_bytes)
    shown = call.shown_arguments if arguments is call.arguments else json.loads(arguments)
    return {"id": call.id, "name": call.name, "arguments": shown}
