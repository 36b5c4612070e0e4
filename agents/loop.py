"""The run loop: prepare -> call the model -> run the tools -> decide, until the tree says stop.

The loop only does the steps; what a limit means lives in the decision tree. A
stop from outside (cancel token), the time limit and the cost and token budgets
interrupt a streaming model call or running tools within a second, keeping what
was already streamed.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from agents import wording
from agents.cancel import CancelToken
from agents.clock import Clock
from agents.endings import ending_events
from agents.events import Event, EventSink, EventType, discard_events
from agents.model import (
    FinishPart,
    Message,
    Model,
    ModelError,
    ModelRequest,
    TextDelta,
    ToolCallPart,
    UsagePart,
)
from agents.state import (
    AgentState,
    FailureClass,
    LastResponse,
    LimitHit,
    Metric,
    ProviderFailure,
    RunStatus,
    TerminationReason,
    Usage,
)
from agents.tools import ToolRegistry, ToolResult
from agents.tree import DecisionTree, Pause, Stop

SYSTEM_PROMPT = (
    "You are the Oracle, a helpful assistant. Use the tools when they help, "
    "keep answers short and clear, and say so when you are unsure."
)

# Before the first call there is no completion to learn from; assume a short answer.
_FIRST_COMPLETION_ESTIMATE = 256
# How long to wait for a cancelled stream or tool to clean up (closing connections).
_CLEANUP_SECONDS = 0.5

# The reason `run.paused` gives when tool calls wait for the user's approval.
APPROVAL = "approval"

T = TypeVar("T")
StopCause = Literal["cancel", "timeout"]
CheckpointSink = Callable[[AgentState], Awaitable[None]]


@dataclass(frozen=True)
class RunDeps:
    """What a run works with; kept apart from the run's state."""

    model: Model
    tree: DecisionTree
    tools: ToolRegistry = field(default_factory=ToolRegistry)
    clock: Clock = field(default_factory=Clock)
    max_retries: int = 3
    retry_base_delay: float = 0.5


@dataclass(frozen=True)
class Headroom:
    """What the run has left of its round's limits at this moment (a subagent gets a
    share of it)."""

    seconds: float
    tokens: int
    cost_usd: float


class ToolContext:
    """What a tool may know of the run calling it, and do in it: the `delegate` tool
    reads the run's headroom, announces its subagent's steps and spends its usage."""

    def __init__(self, run: _Run, call_id: str) -> None:
        self._run = run
        self.call_id = call_id

    @property
    def run_id(self) -> str:
        return self._run.state.run_id

    @property
    def model(self) -> Model:
        return self._run.model

    @property
    def clock(self) -> Clock:
        return self._run.clock

    def headroom(self) -> Headroom:
        """The round's time, tokens and cost left now."""
        return self._run.headroom()

    async def emit(self, event_type: str, **fields: Any) -> None:
        """An event in the run's stream (numbered with the run's own events)."""
        await self._run.emit(event_type, **fields)

    def spend(self, usage: Usage) -> None:
        """Count tokens and cost spent on the run's behalf toward its budgets."""
        self._run.state.add_child_usage(usage)


_TOOL_CONTEXT: ContextVar[ToolContext | None] = ContextVar("oracle_tool_context", default=None)


def tool_context() -> ToolContext | None:
    """The run calling the tool that asks (None outside a run's tool call)."""
    return _TOOL_CONTEXT.get()


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
) -> AgentState:
    """A fresh run state: the system prompt, earlier conversation, then the question."""
    messages: list[Message] = [{"role": "system", "content": system_prompt}]
    messages.extend(history)
    messages.append({"role": "user", "content": question})
    return AgentState(run_id=run_id or uuid.uuid4().hex, messages=messages)


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
) -> RunResult:
    """Answer `question`: emit `run.started`, then run until the tree stops or pauses."""
    state = new_state(question, history=history, system_prompt=system_prompt, run_id=run_id)
    state.unlimited_iterations = deps.tree.get_config().unlimited_iterations
    run = _Run(state, deps, on_event, cancel, on_checkpoint)
    await run.emit(
        EventType.RUN_STARTED,
        run_id=state.run_id,
        model=deps.model.name,
        config=deps.tree.get_config().to_dict(),
    )
    return await run.drive()


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
    run = _Run(state, deps, on_event, cancel, on_checkpoint)
    await _announce_resumed(run)
    return await run.drive()


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
    run = _Run(state, deps, on_event, cancel, on_checkpoint)
    await _announce_resumed(run)
    return await run.drive(resume_tools=True)


async def _announce_resumed(run: _Run, **reason: str) -> None:
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
    run = _Run(state, deps, on_event, cancel, on_checkpoint)
    state.status = RunStatus.RUNNING
    for call in state.awaiting_approval:
        approved = state.approvals.setdefault(call["id"], False)
        await run.emit(
            EventType.TOOL_APPROVAL_GIVEN, id=call["id"], name=call["name"], approved=approved
        )
    state.awaiting_approval = []
    await _announce_resumed(run, reason=APPROVAL)
    return await run.drive(resume_tools=True)


async def stop_paused_run(
    state: AgentState, deps: RunDeps, *, on_event: EventSink = discard_events
) -> RunResult:
    """End a paused run with the reason of the limit it paused at (SPEC section 5); one
    that waited for approval ends as cancelled, its calls not run."""
    if state.status is not RunStatus.PAUSED:
        raise ValueError("only a paused run can be stopped this way")
    reason = TerminationReason.CANCELLED if state.awaiting_approval else state.paused_reason
    if reason is None:
        raise ValueError("a paused run has the reason it paused for")
    state.status = RunStatus.RUNNING
    run = _Run(state, deps, on_event, None, None)
    # Calls that waited for approval get a result each: their steps close, and a
    # Continue's history answers every call the model made (a provider refuses one that
    # does not).
    for call in state.awaiting_approval:
        await run.emit(
            EventType.TOOL_RESULT,
            id=call["id"],
            name=call["name"],
            ok=False,
            content=wording.NOT_ANSWERED,
        )
        state.messages.append(
            {"role": "tool", "tool_call_id": call["id"], "content": wording.NOT_ANSWERED}
        )
    state.awaiting_approval, state.approvals = [], {}
    return await run.finish(reason)


@dataclass
class _Streamed:
    """What one model call produced, complete or not."""

    text_parts: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallPart] = field(default_factory=list)
    usage: UsagePart | None = None
    finish_reason: str | None = None
    interrupted: bool = False
    streamed_chars: int = 0

    @property
    def text(self) -> str:
        return "".join(self.text_parts)


class _Run:
    """One drive of the loop over a state."""

    def __init__(
        self,
        state: AgentState,
        deps: RunDeps,
        on_event: EventSink,
        cancel: CancelToken | None,
        on_checkpoint: CheckpointSink | None,
    ) -> None:
        self.state = state
        self.on_checkpoint = on_checkpoint
        self.deps = deps
        self.tree = deps.tree
        self.model = deps.model
        self.clock = deps.clock
        self.on_event = on_event
        self.cancel = cancel or CancelToken()
        self._mark = self.clock.now()
        self._deadline = self._mark
        # Running estimate of the prompt size, updated as messages are added, so
        # each iteration costs the same however long the history grows.
        self._context_tokens = 0
        self._counted_messages = 0
        self._tools_tokens = (
            self.model.count_tokens([{"role": "system", "content": json.dumps(schemas)}])
            if (schemas := deps.tools.schemas)
            else 0
        )
        self._unemitted_text = ""
        self._turn_start = (0, 0.0)  # the round's tokens and cost when the call began
        # One waiter on the cancel token for the whole drive, not one per model call
        # or tool batch: a task less to create and cancel on every step.
        self._stopper: asyncio.Future[None] | None = None

    async def emit(self, event_type: str, **fields: Any) -> None:
        event: Event = {"type": event_type, "seq": self.state.next_seq, **fields}
        self.state.next_seq += 1
        await self.on_event(event)

    # --- the steps --------------------------------------------------------------

    async def drive(self, *, resume_tools: bool = False) -> RunResult:
        try:
            if resume_tools and (calls := _unanswered_calls(self.state.messages)):
                # The worker was lost while these ran: run them again (a tool may
                # have finished, but its result was never kept), announced already.
                limits = self.state.call_limits
                assert limits is not None, "a step saved mid-way has its call limits"
                self._deadline = self.clock.now() + limits.seconds
                if await self._run_tools(calls, announce=False):
                    return await self._pause_for_approval()
            return await self._drive()
        finally:
            if self._stopper is not None:
                self._stopper.cancel()

    async def _drive(self) -> RunResult:
        state = self.state
        while True:
            self._tick()
            if await self.cancel.poll():
                state.cancel_requested = True
            self._estimate_next_call()
            decision = self.tree.should_continue(state)
            await self._flush_outbox()
            if isinstance(decision, Pause | Stop):
                await self._checkpoint()  # a lost worker ends the run again, with no call
            if isinstance(decision, Pause):
                state.status, state.paused_reason = RunStatus.PAUSED, decision.reason
                state.limit_hit = decision.hit
                return await self._pause(decision.reason)
            if isinstance(decision, Stop):
                state.limit_hit = decision.hit or state.limit_hit
                return await self.finish(decision.reason)
            self.tree.on_turn_start(state)
            await self._flush_outbox()
            # Between iterations the state is whole, and the next call's warnings are
            # given: a lost worker resumes from here, and deciding again gives none of
            # them twice (a checkpoint before deciding would give them again).
            await self._checkpoint()
            if await self._iteration():
                return await self._pause_for_approval()

    async def _checkpoint(self) -> None:
        if self.on_checkpoint is not None:
            await self.on_checkpoint(self.state)

    async def _iteration(self) -> bool:
        """One model call and its tools; True when a tool call waits for approval."""
        state = self.state
        wind_down = state.wind_down_reason is not None
        for hint in state.pending_hints:
            state.messages.append({"role": "system", "content": hint})
        state.pending_hints.clear()
        tools = None if wind_down else (self.deps.tools.schemas or None)
        request = ModelRequest(messages=state.messages, tools=tools)
        state.round.iterations += 1
        state.total.iterations += 1
        assert state.call_limits is not None, "on_turn_start sets the call limits"
        self._deadline = self.clock.now() + state.call_limits.seconds
        self._turn_start = (state.round.tokens, state.round.cost_usd)

        streamed = await self._call_model(request)
        self._record_usage(streamed)
        will_run_tools = self._take_response(streamed, wind_down)
        if not will_run_tools:
            return False
        await self.emit(
            EventType.ASSISTANT_MESSAGE,
            text=self._unemitted_text,
            tool_calls=[_event_call(call) for call in streamed.tool_calls],
            final=False,
        )
        self._unemitted_text = ""
        if self.on_checkpoint is not None:
            # The step is decided and its tools not yet run: a lost worker's run
            # resumes by running them, without asking the model again.
            self._tick()
            await self.on_checkpoint(state)
        return await self._run_tools(streamed.tool_calls)

    def _take_response(self, streamed: _Streamed, wind_down: bool) -> bool:
        """Add the response to the history and to the answer so far; whether its tool
        calls are to run."""
        state = self.state
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
            self._context_tokens = streamed.usage.prompt_tokens + streamed.usage.completion_tokens
            self._counted_messages = len(state.messages)
        state.last_response = LastResponse(
            had_tool_calls=bool(streamed.tool_calls),
            interrupted=streamed.interrupted,
            wind_down=wind_down,
            text=streamed.text,
            cut_off=cut_off,
            continued=continued,
        )
        self._unemitted_text = (self._unemitted_text if continued else "") + streamed.text
        if cut_off:
            state.pending_hints.append(wording.CUT_OFF_HINT)
        return will_run_tools

    async def _call_model(self, request: ModelRequest) -> _Streamed:
        attempt = 0
        while True:
            streamed = _Streamed()
            try:
                cause = await self._until_stopped(self._consume(request, streamed))
            except ModelError as error:
                retry_in = self._retry_delay(error, attempt, streamed)
                if retry_in is None:
                    self.state.provider_failure = ProviderFailure(
                        error.kind, error.status, self.model.name, str(error)
                    )
                    self.state.limit_hit = LimitHit(
                        Metric.ATTEMPTS, attempt + 1, self.deps.max_retries + 1
                    )
                    streamed.interrupted = True
                    return streamed
                attempt += 1
                if await self._until_stopped(self.clock.sleep(retry_in)) is not None:
                    streamed.interrupted = True
                    return streamed
                continue
            if cause is not None:
                streamed.interrupted = True
            return streamed

    def _retry_delay(self, error: ModelError, attempt: int, streamed: _Streamed) -> float | None:
        """Seconds to wait before retrying, or None when the error ends the run."""
        if not error.transient or streamed.text_parts or attempt >= self.deps.max_retries:
            return None
        delay = error.retry_after
        if delay is None:
            delay = self.deps.retry_base_delay * 2**attempt
        if self.clock.now() + delay >= self._deadline:
            return None  # the retry would land past the run's time limit
        return delay

    async def _consume(self, request: ModelRequest, streamed: _Streamed) -> None:
        limits = self.state.call_limits
        assert limits is not None
        prompt_estimate = self.state.estimated_prompt_tokens
        warn_at = self._time_warning_at()  # then a clock reading per part, no more
        async with aclosing(self.model.stream(request)) as parts:
            async for part in parts:
                if warn_at is not None and self.clock.now() >= warn_at:
                    await self._time_warning()
                    warn_at = None
                if isinstance(part, TextDelta):
                    if not part.text:
                        continue
                    streamed.text_parts.append(part.text)
                    streamed.streamed_chars += len(part.text)
                    await self.emit(EventType.ASSISTANT_DELTA, text=part.text)
                    # Token and cost budgets mid-response: this chunk is kept, then stop.
                    completion = _estimate_text_tokens(streamed.streamed_chars)
                    if limits.passed_mid_call(
                        prompt_estimate + completion, self.model.price(prompt_estimate, completion)
                    ):
                        streamed.interrupted = True
                        return
                elif isinstance(part, ToolCallPart):
                    streamed.tool_calls.append(part)
                elif isinstance(part, UsagePart):
                    streamed.usage = part
                elif isinstance(part, FinishPart):
                    streamed.finish_reason = part.reason

    def _time_warning_at(self) -> float | None:
        """The clock reading at which the round's time warning falls due, if one is due."""
        limits = self.state.call_limits
        if limits is None or limits.time_warning is None:
            return None
        # The round's time is its elapsed_s plus what passed since the last tick (_mark).
        return self._mark + limits.time_warning.at_seconds - self.state.round.elapsed_s

    def _time_warning_in(self) -> float | None:
        """Real seconds until the round's time warning falls due; None if none is due."""
        at = self._time_warning_at()
        return None if at is None else self.clock.to_real(at - self.clock.now())

    async def _time_warning(self) -> None:
        """Give the round's time warning as soon as it falls due, mid-call if need be."""
        state, limits, at = self.state, self.state.call_limits, self._time_warning_at()
        if limits is None or limits.time_warning is None or at is None or self.clock.now() < at:
            return
        warning, limits.time_warning = limits.time_warning, None
        state.warnings_given.append(Metric.TIME)
        hit = LimitHit(Metric.TIME, warning.at_seconds, warning.limit)
        await self.emit(
            EventType.SYSTEM_NOTICE,
            severity="warning",
            metric=hit.metric,
            value=hit.value,
            limit=hit.limit,
            text=warning.text,
        )
        if warning.hint:
            state.pending_hints.append(warning.hint)

    def _record_usage(self, streamed: _Streamed) -> None:
        state = self.state
        if streamed.usage is not None:
            prompt, completion = streamed.usage.prompt_tokens, streamed.usage.completion_tokens
        else:
            # No figures from the provider (the call was cut short): use the estimates.
            prompt = (
                state.estimated_prompt_tokens
                if streamed.streamed_chars or streamed.tool_calls
                else 0
            )
            completion = _estimate_text_tokens(streamed.streamed_chars)
        state.add_usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost_usd=self.model.price(prompt, completion) if prompt or completion else 0.0,
        )

    async def _run_tools(self, calls: list[ToolCallPart], *, announce: bool = True) -> bool:
        """Run a step's tool calls; True (and nothing run) when some wait for approval."""
        state = self.state
        assert state.call_limits is not None
        allowed = calls[: state.call_limits.allowed_tool_calls(len(calls))]
        results: dict[str, ToolResult] = {}
        limit = asyncio.Semaphore(self.tree.get_config().max_parallel_tools)

        async def run_one(call: ToolCallPart) -> None:
            context = _TOOL_CONTEXT.set(ToolContext(self, call.id))
            try:
                if state.approvals.get(call.id) is False:
                    result = ToolResult(call.id, call.name, {}, False, wording.DECLINED)
                else:
                    async with limit:
                        result = await self.deps.tools.run(call.id, call.name, call.arguments)
            finally:
                _TOOL_CONTEXT.reset(context)
            results[call.id] = result
            self.tree.on_tool_result(state, result)
            attachments = {"attachments": list(result.attachments)} if result.attachments else {}
            await self.emit(
                EventType.TOOL_RESULT,
                id=call.id,
                name=call.name,
                ok=result.ok,
                content=result.content,
                **attachments,
            )

        for call in calls if announce else ():
            await self.emit(
                EventType.TOOL_CALL, id=call.id, name=call.name, arguments=call.shown_arguments
            )
        if waiting := self._awaiting_approval(allowed):
            state.awaiting_approval = waiting
            return True
        state.round.tool_calls += len(allowed)
        state.total.tool_calls += len(allowed)
        if all(self.deps.tools.runs_inline(call.name) for call in allowed):
            # Inline tools run in this thread to their end, so no stop could cut them
            # short: no task and no waiter for one. A stop asked meanwhile ends the
            # run before the next model call (the loop polls it first). bench/engine.py:
            # 0.24 ms a step this way, 0.34-0.41 ms through the path below.
            for call in allowed:
                await run_one(call)
        elif allowed:  # tools that may take a while: a stop or the time limit cuts them
            await self._until_stopped(asyncio.gather(*(run_one(call) for call in allowed)))
        for call in calls:
            result = results.get(call.id)
            if result is None:
                content = (
                    "Not run: the run stopped first."
                    if call in allowed
                    else "Not run: the tool-call budget of this run is used up."
                )
                result = ToolResult(call.id, call.name, {}, False, content)
                await self.emit(
                    EventType.TOOL_RESULT, id=call.id, name=call.name, ok=False, content=content
                )
            state.messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": result.content}
            )
        for call in calls:
            state.approvals.pop(call.id, None)  # answered: nothing to keep
        return False

    def _awaiting_approval(self, calls: list[ToolCallPart]) -> list[dict[str, Any]]:
        """The calls that need the user's approval and have no answer yet."""
        waiting = []
        for call in calls:
            tool = self.deps.tools.get(call.name)
            if tool is None or not tool.needs_approval or call.id in self.state.approvals:
                continue
            waiting.append({"id": call.id, "name": call.name, "server": tool.server,
                            "arguments": call.shown_arguments})  # fmt: skip
        return waiting

    # --- stopping from outside --------------------------------------------------

    async def _until_stopped(self, work: Awaitable[T]) -> StopCause | None:
        """Await `work` unless a cancel or the time limit comes first; then stop it."""
        task = asyncio.ensure_future(work)
        if self._stopper is None:
            self._stopper = asyncio.ensure_future(self.cancel.wait())
        stopper = self._stopper
        try:
            while True:
                timeout = self.clock.to_real(self._deadline - self.clock.now())
                warn_in = self._time_warning_in()
                wait = timeout if warn_in is None else min(timeout, warn_in)
                done, _ = await asyncio.wait(
                    (task, stopper), timeout=wait, return_when=asyncio.FIRST_COMPLETED
                )
                if done or warn_in is None or warn_in >= timeout:
                    break
                await self._time_warning()  # a long stall or a slow tool: warn meanwhile
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task in done:
            task.result()
            return None
        task.cancel()
        # Let the stream close its connection (or the tool unwind), but never wait long.
        await asyncio.wait((task,), timeout=_CLEANUP_SECONDS)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved so asyncio does not log it; the stop wins
        if stopper in done or self.cancel.cancelled:
            self.state.cancel_requested = True
            return "cancel"
        # Timers may fire a hair early; make sure the clock shows the limit reached.
        await asyncio.sleep(self.clock.to_real(self._deadline - self.clock.now()))
        return "timeout"

    # --- endings ----------------------------------------------------------------

    async def finish(self, reason: TerminationReason) -> RunResult:
        state = self.state
        self._tick()
        state.status = RunStatus.FINISHED
        state.termination_reason = reason
        state.failure_class = _failure_class(reason, state)
        state.final_text = wording.final_message(
            reason, state.limit_hit, self._unemitted_text, failure=state.provider_failure
        )
        for event in ending_events(
            reason,
            hit=state.limit_hit,
            final_text=state.final_text,
            counters=state.counters(),
            failure_class=state.failure_class,
            failure=state.provider_failure,
        ):
            await self.emit(event.pop("type"), **event)
        return RunResult(state)

    async def _pause_for_approval(self) -> RunResult:
        """Wait for the user's Approve or Deny of the step's calls, holding no worker;
        the time waited is not run time."""
        state = self.state
        self._tick()
        state.status = RunStatus.PAUSED
        for call in state.awaiting_approval:
            await self.emit(EventType.TOOL_APPROVAL_REQUESTED, **call)
        await self.emit(
            EventType.SYSTEM_NOTICE,
            severity="warning",
            metric=None,
            value=None,
            limit=None,
            text=wording.approval_notice(state.awaiting_approval),
            reason=APPROVAL,
        )
        await self.emit(EventType.RUN_PAUSED, reason=APPROVAL)
        return RunResult(state)

    async def _pause(self, reason: TerminationReason) -> RunResult:
        state = self.state
        self._tick()
        if self._unemitted_text:
            await self.emit(
                EventType.ASSISTANT_MESSAGE, text=self._unemitted_text, tool_calls=[], final=False
            )
        hit = state.limit_hit
        await self.emit(
            EventType.SYSTEM_NOTICE,
            severity="warning",
            metric=hit.metric if hit else None,
            value=hit.value if hit else None,
            limit=hit.limit if hit else None,
            text=wording.pause_notice(hit, reason),
            reason=reason.value,
        )
        await self.emit(EventType.RUN_PAUSED, reason=reason.value)
        return RunResult(state)

    # --- bookkeeping ------------------------------------------------------------

    def headroom(self) -> Headroom:
        limits, used = self.state.call_limits, self.state.round
        if limits is None:
            return Headroom(0.0, 0, 0.0)
        tokens, cost = self._turn_start
        return Headroom(
            seconds=self._deadline - self.clock.now(),
            tokens=limits.tokens - (used.tokens - tokens),
            cost_usd=limits.cost_usd - (used.cost_usd - cost),
        )

    def _tick(self) -> None:
        now = self.clock.now()
        self.state.add_elapsed(now - self._mark)
        self._mark = now

    def _estimate_next_call(self) -> None:
        state = self.state
        new_messages = state.messages[self._counted_messages :]
        if new_messages:
            self._context_tokens += self.model.count_tokens(new_messages)
            self._counted_messages = len(state.messages)
        prompt = self._context_tokens + self._tools_tokens
        done = state.total.iterations
        completion = state.total.completion_tokens // done if done else _FIRST_COMPLETION_ESTIMATE
        state.estimated_prompt_tokens = prompt
        state.estimated_call_cost_usd = self.model.price(prompt, completion)

    async def _flush_outbox(self) -> None:
        state = self.state
        for event in state.pending_events:
            await self.emit(event["type"], **{k: v for k, v in event.items() if k != "type"})
        state.pending_events.clear()
        for notice in state.pending_notices:
            await self.emit(
                EventType.SYSTEM_NOTICE,
                severity=notice.severity,
                metric=notice.metric,
                value=notice.value,
                limit=notice.limit,
                text=notice.text,
            )
        state.pending_notices.clear()


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


def _estimate_text_tokens(chars: int) -> int:
    # About four characters a token in English; only used until the provider's figures come.
    return (chars + 3) // 4


def _failure_class(reason: TerminationReason, state: AgentState) -> FailureClass | None:
    if reason in (TerminationReason.COMPLETED, TerminationReason.CANCELLED):
        return None
    if reason is TerminationReason.INTERRUPTED:
        return FailureClass.TRANSIENT_INFRA
    failure = state.provider_failure
    if reason is TerminationReason.PROVIDER_ERROR and failure and failure.kind.transient:
        return FailureClass.TRANSIENT_INFRA
    return FailureClass.DETERMINISTIC


def _unanswered_calls(messages: Sequence[Message]) -> list[ToolCallPart]:
    """The tool calls of the last message when it is a step whose tools have no results
    yet (the state was saved after the model asked and before the tools answered)."""
    if not messages or messages[-1].get("role") != "assistant":
        return []
    return [
        ToolCallPart(id=wire["id"], name=wire["function"]["name"],
                     arguments=wire["function"]["arguments"])
        for wire in messages[-1].get("tool_calls") or []
    ]  # fmt: skip


def _wire_call(call: ToolCallPart) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def _event_call(call: ToolCallPart) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.shown_arguments}
