"""The run loop: prepare -> call the model -> run the tools -> decide, until the tree says stop.

The loop only drives the steps, each a module of `agents.run`: asking the model
(`model_step`), running tools (`tool_step`), waiting on a stop or a time limit
(`stopping`) and ending or pausing a run (`ending`); what a limit means lives in
the decision tree. A stop from outside (cancel token), the time limit and the cost
and token budgets interrupt a streaming model call or running tools within a
second, keeping what was already streamed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from agents import wording
from agents.cancel import CancelToken
from agents.context.ledger import Summary as Summary
from agents.events import APPROVAL as APPROVAL
from agents.events import EventSink, EventType, discard_events
from agents.instructions import apply_instructions
from agents.model import Message
from agents.run.context import CheckpointSink as CheckpointSink
from agents.run.context import RunContext
from agents.run.deps import Headroom as Headroom
from agents.run.deps import RunDeps as RunDeps
from agents.run.deps import ToolContext as ToolContext
from agents.run.deps import tool_context as tool_context
from agents.run.ending import finish, flush_outbox, pause, pause_for_approval
from agents.run.model_step import request_model
from agents.run.tool_step import (
    close_unanswered_approvals,
    run_tools,
    take_approval_answers,
    unanswered_calls,
)
from agents.state import AgentState, RunStatus, TerminationReason
from agents.tree import Pause, Stop

SYSTEM_PROMPT = (
    "You are the Oracle, a helpful assistant. Use the tools when they help, "
    "keep answers short and clear, and say so when you are unsure."
)


@dataclass(frozen=True)
class RunResult:
    """How a run (or one round of it) came out; `state` is ready to save or continue."""

    state: AgentState

    @property
    def status(self) -> RunStatus:
        return self.state.status

    @property
    def reason(self) -> TerminationReason | None:
        return self.state.termination_reason or self.state.paused_reason

    @property
    def final_text(self) -> str:
        return self.state.final_text


def new_state(
    question: str,
    *,
    history: Sequence[Message] = (),
    system_prompt: str = SYSTEM_PROMPT,
    run_id: str | None = None,
    summary: Summary | None = None,
) -> AgentState:
    """A fresh run state: the system prompt, earlier conversation, then the question;
    with the `summary` an earlier run made of the conversation's first messages."""
    messages: list[Message] = [{"role": "system", "content": system_prompt}]
    messages.extend(history)
    messages.append({"role": "user", "content": question})
    state = AgentState(run_id=run_id or uuid.uuid4().hex, messages=messages)
    state.context.history = len(history) + 1
    if summary is not None and 0 < summary.covers <= len(history):
        state.context.summary = summary.text
        state.context.summary_end = 1 + summary.covers
    return state


async def start_run(
    question: str,
    deps: RunDeps,
    *,
    on_event: EventSink = discard_events,
    cancel: CancelToken | None = None,
    on_checkpoint: CheckpointSink | None = None,
    history: Sequence[Message] = (),
    system_prompt: str = SYSTEM_PROMPT,
    run_id: str | None = None,
    summary: Summary | None = None,
) -> RunResult:
    """Answer `question`: emit `run.started`, then run until the tree stops or pauses.
    `summary`: the one an earlier run made of the first messages of `history`, sent in
    their place (the history itself stays whole)."""
    state = new_state(
        question, history=history, system_prompt=system_prompt, run_id=run_id, summary=summary
    )
    state.unlimited_iterations = deps.tree.get_config().unlimited_iterations
    run = RunContext(state, deps, on_event, cancel, on_checkpoint)
    await run.emit(
        EventType.RUN_STARTED,
        run_id=state.run_id,
        model=deps.model.name,
        config=deps.tree.get_config().to_dict(),
    )
    return await _drive(run)


async def continue_run(
    state: AgentState,
    deps: RunDeps,
    *,
    on_event: EventSink = discard_events,
    cancel: CancelToken | None = None,
    on_checkpoint: CheckpointSink | None = None,
) -> RunResult:
    """Continue a stopped or paused run: a fresh round, no new user message.

    Round counters start again; the run totals keep counting. The current
    settings in `deps.tree` apply.
    """
    if state.termination_reason is TerminationReason.COMPLETED:
        raise ValueError("a completed run has nothing to continue")
    state.begin_round(unlimited_iterations=deps.tree.get_config().unlimited_iterations)
    # The last round's wrap-up (no more tools, finish now) no longer holds.
    state.messages = [m for m in state.messages if not _is_round_hint(m)]
    state.pending_hints.append(wording.new_round_hint(state.rounds))
    run = RunContext(state, deps, on_event, cancel, on_checkpoint)
    await _announce_resumed(run)
    return await _drive(run)


async def resume_run(
    state: AgentState,
    deps: RunDeps,
    *,
    on_event: EventSink = discard_events,
    cancel: CancelToken | None = None,
    on_checkpoint: CheckpointSink | None = None,
) -> RunResult:
    """Pick a running state up again in the same round (e.g. after a worker was lost).
    A worker lost as it took up the user's answers to an approval left the paused state
    with those answers in it: the run goes on from them."""
    if state.status is RunStatus.PAUSED and state.awaiting_approval:
        return await answer_approval(
            state, deps, on_event=on_event, cancel=cancel, on_checkpoint=on_checkpoint
        )
    state.apply_iteration_mode(unlimited_iterations=deps.tree.get_config().unlimited_iterations)
    run = RunContext(state, deps, on_event, cancel, on_checkpoint)
    await _announce_resumed(run)
    return await _drive(run, resume_tools=True)


async def _announce_resumed(run: RunContext, **reason: str) -> None:
    """`run.resumed`, with the settings this round runs under and the totals it starts
    from (the chat's gauges show the round's own counters against its limits); with
    `reason` "approval" when the user's answer to an approval resumed it."""
    await run.emit(
        EventType.RUN_RESUMED,
        run_id=run.state.run_id,
        round=run.state.rounds,
        config=run.tree.get_config().to_dict(),
        before_round=run.state.counters_before_round(),
        **reason,
    )


async def answer_approval(
    state: AgentState,
    deps: RunDeps,
    *,
    on_event: EventSink = discard_events,
    cancel: CancelToken | None = None,
    on_checkpoint: CheckpointSink | None = None,
) -> RunResult:
    """Go on with a run that waited for approval, in the same round: approved calls run,
    declined ones give the model a tool error. The answers are in `state.approvals`
    (a call with none counts as declined)."""
    if state.status is not RunStatus.PAUSED or not state.awaiting_approval:
        raise ValueError("only a run waiting for approval can be answered")
    run = RunContext(state, deps, on_event, cancel, on_checkpoint)
    state.status = RunStatus.RUNNING
    await take_approval_answers(run)
    await _announce_resumed(run, reason=APPROVAL)
    return await _drive(run, resume_tools=True)


async def stop_paused_run(
    state: AgentState,
    deps: RunDeps,
    *,
    on_event: EventSink = discard_events,
    expired: bool = False,
) -> RunResult:
    """End a paused run with the reason of the limit it paused at (SPEC section 5); one
    that waited for approval ends as cancelled, its calls not run. `expired`: it waited
    on the user longer than the site allows, and ends `pause_expired`."""
    if state.status is not RunStatus.PAUSED:
        raise ValueError("only a paused run can be stopped this way")
    reason = TerminationReason.CANCELLED if state.awaiting_approval else state.paused_reason
    if expired:
        reason = TerminationReason.PAUSE_EXPIRED
    if reason is None:
        raise ValueError("a paused run has the reason it paused for")
    state.status = RunStatus.RUNNING
    run = RunContext(state, deps, on_event, None, None)
    await close_unanswered_approvals(run, expired=expired)
    await finish(run, reason)
    return RunResult(state)


async def _drive(run: RunContext, *, resume_tools: bool = False) -> RunResult:
    """Run the steps until the tree stops or pauses the run, or a call waits for approval;
    with `resume_tools`, first the tools of a step saved before they answered. The system
    prompt carries the user's instructions as the settings have them now."""
    apply_instructions(run.state.messages, run.tree.get_config().custom_instructions)
    try:
        if resume_tools and (calls := unanswered_calls(run.state.messages)):
            # The worker was lost while these ran (announced already): the calls
            # that ended keep their results, and only the others run (tool_step).
            limits = run.state.call_limits
            assert limits is not None, "a step saved mid-way has its call limits"
            run.deadline = run.clock.now() + limits.seconds
            if await run_tools(run, calls, announce=False):
                await pause_for_approval(run)
                return RunResult(run.state)
        return await _steps(run)
    finally:
        run.stop_waiting()


async def _steps(run: RunContext) -> RunResult:
    state = run.state
    while True:
        run.tick()
        if await run.cancel.poll():
            state.cancel_requested = True
        run.estimate_next_call()
        decision = run.tree.should_continue(state)
        await flush_outbox(run)
        if isinstance(decision, Pause | Stop):
            await run.checkpoint()  # a lost worker ends the run again, with no call
        if isinstance(decision, Pause):
            state.status, state.paused_reason = RunStatus.PAUSED, decision.reason
            state.limit_hit = decision.hit
            await pause(run, decision.reason)
            return RunResult(state)
        if isinstance(decision, Stop):
            state.limit_hit = decision.hit or state.limit_hit
            await finish(run, decision.reason)
            return RunResult(state)
        run.tree.on_turn_start(state)
        await flush_outbox(run)
        # Between iterations the state is whole, and the next call's warnings are
        # given: a lost worker resumes from here, and deciding again gives none of
        # them twice (a checkpoint before deciding would give them again).
        await run.checkpoint()
        calls = await request_model(run)
        if calls and await run_tools(run, calls):
            await pause_for_approval(run)
            return RunResult(state)


def _is_round_hint(message: Message) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "system"
        and isinstance(content, str)
        and (
            content == wording.WIND_DOWN_INSTRUCTION
            or (content.startswith(wording.HINT_PREFIX) and content != wording.CUT_OFF_HINT)
        )
    )
