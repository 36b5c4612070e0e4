"""Running a step's tool calls: within the round's tool-call budget, each after the
user's approval where its tool needs one, in parallel up to the configured number,
every call answered in the history (run, declined or not run).

A call that acted never runs twice: each call's result is kept in the state as it ends
(and saved at once), and a call that may act is marked begun, saved before it goes on.
A step resumed after a lost worker keeps the results it had, runs the calls never
begun, and runs one cut mid-way again only when its tool is idempotent; the model is
told of any other that it was cut.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import asdict
from typing import Any

from agents import wording
from agents.events import EventType
from agents.model import Message, ToolCallPart
from agents.run.context import RunContext
from agents.run.deps import TOOL_CONTEXT, ToolContext
from agents.run.stopping import until_stopped
from agents.tools import ToolResult

# What the model is told of a call cut mid-way by a lost worker, whose tool may have acted.
INTERRUPTED_CALL = (
    "Error: this call was cut off when the worker running it was lost. It may or may not "
    "have done what it does: check before calling it again."
)
# The calls running here, outermost first: a helper's run (`delegate`) runs inside one.
RUNNING: ContextVar[tuple[tuple[RunContext, str], ...]] = ContextVar("running", default=())


async def run_tools(run: RunContext, calls: list[ToolCallPart], *, announce: bool = True) -> bool:
    """Run a step's tool calls; True (and nothing run) when some wait for approval.
    Called again with a step a lost worker left, it runs only what had not ended."""
    state = run.state
    assert state.call_limits is not None
    allowed = calls[: state.call_limits.allowed_tool_calls(len(calls))]
    results = _kept(run, allowed)
    to_run = [call for call in allowed if call.id not in results]
    limit = asyncio.Semaphore(run.tree.get_config().max_parallel_tools)

    async def run_one(call: ToolCallPart) -> None:
        context = TOOL_CONTEXT.set(ToolContext(run, call.id))
        running = RUNNING.set((*RUNNING.get(), (run, call.id)))
        declined = state.approvals.get(call.id) is False
        try:
            if declined:
                result = ToolResult(call.id, call.name, {}, False, wording.DECLINED)
            else:
                async with limit:
                    await _begin(run, call)
                    result = await run.deps.tools.run(call.id, call.name, call.arguments)
        finally:
            RUNNING.reset(running)
            TOOL_CONTEXT.reset(context)
        await _ended(run, call, result, results, not_run="declined" if declined else "")

    for call in calls if announce else ():
        await run.emit(
            EventType.TOOL_CALL, id=call.id, name=call.name, arguments=call.shown_arguments
        )
    if waiting := _awaiting_approval(run, to_run):
        state.awaiting_approval = waiting
        return True
    if not (state.step_results or state.step_started):  # else counted before the loss
        state.round.tool_calls += len(allowed)
        state.total.tool_calls += len(allowed)
    for call in allowed:
        if call.id in results and call.id not in state.step_results:  # cut by the loss
            await _ended(run, call, results[call.id], results)
    if to_run and await run.cancel.poll():
        to_run = []  # a Stop came before they began: none begins (each says so below)
    if all(run.deps.tools.runs_inline(call.name) for call in to_run):
        # Inline tools run in this thread to their end, so no stop could cut them
        # short: no task and no waiter for one. A stop asked meanwhile ends the
        # run before the next model call (the loop polls it first). bench/engine.py:
        # 0.24 ms a step this way, 0.34-0.41 ms through the path below.
        for call in to_run:
            await run_one(call)
    elif to_run:  # tools that may take a while: a stop or the time limit cuts them
        await until_stopped(run, asyncio.gather(*(run_one(call) for call in to_run)))
    for call in calls:
        result = results.get(call.id)
        if result is None:
            stopped = call in allowed
            content = (
                "Not run: the run stopped first."
                if stopped
                else "Not run: the tool-call budget of this run is used up."
            )
            result = ToolResult(call.id, call.name, {}, False, content)
            await run.emit(
                EventType.TOOL_RESULT, id=call.id, name=call.name, ok=False, content=content,
                not_run="stopped" if stopped else "budget",
            )  # fmt: skip
        state.messages.append({"role": "tool", "tool_call_id": call.id, "content": result.content})
    for call in calls:
        state.approvals.pop(call.id, None)  # answered: nothing to keep
    state.step_results, state.step_started = {}, []  # the step is closed
    return False


def _kept(run: RunContext, calls: list[ToolCallPart]) -> dict[str, ToolResult]:
    """The results a lost worker left of these calls: those that ended, and an error for
    each marked begun and not ended (it, or a helper's call inside it, may have acted)."""
    state, kept = run.state, {}
    for call in calls:
        if (ended := state.step_results.get(call.id)) is not None:
            kept[call.id] = ToolResult(call.id, call.name, {}, ended["ok"], ended["content"])
        elif call.id in state.step_started:
            kept[call.id] = ToolResult(call.id, call.name, {}, False, INTERRUPTED_CALL)
    return kept


def _idempotent(run: RunContext, call: ToolCallPart) -> bool:
    tool = run.deps.tools.get(call.name)
    return tool is not None and tool.idempotent


async def _begin(run: RunContext, call: ToolCallPart) -> None:
    """Mark a call begun that may act and may be cut mid-way (a tool that is neither
    inline nor idempotent), saved before the call goes on; and so the calls it runs
    inside (a helper's call marks its `delegate` call: the helper is not started
    again), the outermost saved first."""
    if run.deps.tools.runs_inline(call.name) or _idempotent(run, call):
        return
    for caller, call_id in RUNNING.get():
        if call_id not in caller.state.step_started:
            caller.state.step_started.append(call_id)
            caller.tick()
            await caller.checkpoint()


async def _ended(
    run: RunContext,
    call: ToolCallPart,
    result: ToolResult,
    results: dict[str, ToolResult],
    *,
    not_run: str = "",
) -> None:
    """A call's result: told, counted by the tree, and kept in the state (saved at once
    when the call could be cut: a lost worker's run must not run it again)."""
    state = run.state
    results[call.id] = result
    run.tree.on_tool_result(state, result)
    extra: dict[str, Any] = {"not_run": not_run} if not_run else {}
    if result.attachments:
        extra["attachments"] = list(result.attachments)
    await run.emit(
        EventType.TOOL_RESULT,
        id=call.id,
        name=call.name,
        ok=result.ok,
        content=result.content,
        **extra,
    )
    if result.refusal is not None:  # refused at one of the operator's bounds: for the log
        await run.emit(EventType.TOOL_REFUSED, id=call.id, name=call.name,
                       **asdict(result.refusal))  # fmt: skip
    state.step_results[call.id] = {"ok": result.ok, "content": result.content}
    if not (not_run or run.deps.tools.runs_inline(call.name)):
        run.tick()
        await run.checkpoint()


def _awaiting_approval(run: RunContext, calls: list[ToolCallPart]) -> list[dict[str, Any]]:
    """The calls that need the user's approval and have no answer yet."""
    waiting = []
    for call in calls:
        tool = run.deps.tools.get(call.name)
        if tool is None or not tool.needs_approval or call.id in run.state.approvals:
            continue
        waiting.append({"id": call.id, "name": call.name, "server": tool.server,
                        "grant": tool.grant, "arguments": call.shown_arguments})  # fmt: skip
    return waiting


async def take_approval_answers(run: RunContext) -> None:
    """Take the user's answers to the calls that waited for approval (a call with none
    counts as declined), each announced; the calls then run or are declined."""
    state = run.state
    for call in state.awaiting_approval:
        approved = state.approvals.setdefault(call["id"], False)
        await run.emit(
            EventType.TOOL_APPROVAL_GIVEN, id=call["id"], name=call["name"], approved=approved
        )
    state.awaiting_approval = []


async def close_unanswered_approvals(run: RunContext, *, expired: bool = False) -> None:
    """The calls that waited for approval get a result each, not run: their steps close,
    and a Continue's history answers every call the model made (a provider refuses one
    that does not); the step's calls that ended before a lost worker's resume asked
    again keep their results. `expired`: the approval waited longer than the site allows."""
    closed = wording.EXPIRED if expired else wording.NOT_ANSWERED
    state = run.state
    for call_id, ended in state.step_results.items():
        state.messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": ended["content"]}
        )
    for call in state.awaiting_approval:
        await run.emit(
            EventType.TOOL_RESULT,
            id=call["id"],
            name=call["name"],
            ok=False,
            content=closed,
            not_run="expired" if expired else "unanswered",
        )
        state.messages.append({"role": "tool", "tool_call_id": call["id"], "content": closed})
    state.awaiting_approval, state.approvals = [], {}
    state.step_results, state.step_started = {}, []


def unanswered_calls(messages: Sequence[Message]) -> list[ToolCallPart]:
    """The tool calls of the last message when it is a step whose tools have no results
    yet (the state was saved after the model asked and before the tools answered)."""
    if not messages or messages[-1].get("role") != "assistant":
        return []
    return [
        ToolCallPart(id=wire["id"], name=wire["function"]["name"],
                     arguments=wire["function"]["arguments"])
        for wire in messages[-1].get("tool_calls") or []
    ]  # fmt: skip
