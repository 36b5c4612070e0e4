"""Ending or pausing a run: its final message and closing events (the shape of which
`agents.endings` gives), a pause at a limit or for the user's approval, and the
events and notices the tree left to send.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents import wording
from agents.endings import ending_events
from agents.events import APPROVAL, EventType
from agents.instructions import instructions_in
from agents.model import Message
from agents.run.context import RunContext
from agents.state import AgentState, FailureClass, RunStatus, TerminationReason
from agents.tools_share import tools_cause


async def finish(run: RunContext, reason: TerminationReason) -> None:
    """End the run for `reason`: its final message, the System notice, `run.finished`."""
    state = run.state
    run.tick()
    state.status = RunStatus.FINISHED
    state.termination_reason = reason
    state.failure_class = failure_class(reason, state)
    hit = state.limit_hit
    if hit is not None and not hit.detail:  # the tools' share, when it is the cause
        count = len(run.deps.tools.schemas)
        prompt, tools = state.estimated_prompt_tokens, run.tools_tokens
        hit.detail = tools_cause(hit, prompt=prompt, tools_tokens=tools, count=count)
    state.final_text = wording.final_message(
        reason,
        state.limit_hit,
        run.unemitted_text,
        failure=state.provider_failure,
        found=steps_found(state.messages),
    )
    for event in ending_events(
        reason,
        hit=state.limit_hit,
        final_text=state.final_text,
        counters=state.counters(),
        failure_class=state.failure_class,
        failure=state.provider_failure,
        instructions=instructions_in(state.messages),
    ):
        await run.emit(event.pop("type"), **event)


async def pause_for_approval(run: RunContext) -> None:
    """Wait for the user's Approve or Deny of the step's calls, holding no worker;
    the time waited is not run time."""
    state = run.state
    run.tick()
    state.status = RunStatus.PAUSED
    for call in state.awaiting_approval:
        await run.emit(EventType.TOOL_APPROVAL_REQUESTED, **call)
    await run.emit(
        EventType.SYSTEM_NOTICE,
        severity="warning",
        metric=None,
        value=None,
        limit=None,
        text=wording.approval_notice(state.awaiting_approval),
        reason=APPROVAL,
    )
    await run.emit(EventType.RUN_PAUSED, reason=APPROVAL)


async def pause(run: RunContext, reason: TerminationReason) -> None:
    """Pause at a limit (the user's limit action says so): the text so far is shown,
    and a System notice says which limit and what Continue does."""
    state = run.state
    run.tick()
    if run.unemitted_text:
        await run.emit(
            EventType.ASSISTANT_MESSAGE, text=run.unemitted_text, tool_calls=[], final=False
        )
    hit = state.limit_hit
    await run.emit(
        EventType.SYSTEM_NOTICE,
        severity="warning",
        metric=hit.metric if hit else None,
        value=hit.value if hit else None,
        limit=hit.limit if hit else None,
        text=wording.pause_notice(hit, reason),
        reason=reason.value,
    )
    await run.emit(EventType.RUN_PAUSED, reason=reason.value)


async def flush_outbox(run: RunContext) -> None:
    """Send the events and notices the tree left on the state, then forget them."""
    state = run.state
    for event in state.pending_events:
        await run.emit(event["type"], **{k: v for k, v in event.items() if k != "type"})
    state.pending_events.clear()
    for notice in state.pending_notices:
        await run.emit(
            EventType.SYSTEM_NOTICE,
            severity=notice.severity,
            metric=notice.metric,
            value=notice.value,
            limit=notice.limit,
            text=notice.text,
        )
    state.pending_notices.clear()


def failure_class(reason: TerminationReason, state: AgentState) -> FailureClass | None:
    """Whether trying again could help: None for an answer or the user's stop."""
    if reason in (TerminationReason.COMPLETED, TerminationReason.CANCELLED):
        return None
    if reason is TerminationReason.INTERRUPTED:
        return FailureClass.TRANSIENT_INFRA
    failure = state.provider_failure
    if reason is TerminationReason.PROVIDER_ERROR and failure and failure.kind.transient:
        return FailureClass.TRANSIENT_INFRA
    return FailureClass.DETERMINISTIC


FOUND_SHOWN = 3  # results named in a final message written for a run that wrote none
FOUND_CHARS = 300


def steps_found(messages: Sequence[Message]) -> list[str]:
    """What the run's tool steps found: their last few results that are not errors,
    each once and cut short ("lookup: Notes about owls.")."""
    names = {
        wire["id"]: wire["function"]["name"]
        for message in messages
        if message.get("role") == "assistant"
        for wire in message.get("tool_calls") or []
    }
    found: list[str] = []
    for message in messages:
        result = str(message.get("content") or "").strip()
        if message.get("role") != "tool" or not result or result.startswith(NOT_FOUND):
            continue
        if len(result) > FOUND_CHARS:
            result = result[:FOUND_CHARS].rstrip() + "…"
        line = f"{names.get(message.get('tool_call_id'), 'a step')}: {result}"
        if line not in found:
            found.append(line)
    return found[-FOUND_SHOWN:]


NOT_FOUND = ("Error:", "Not run:")  # a failed step, or one that never ran
