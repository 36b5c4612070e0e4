"""Waiting on a stop or a time limit: a stop from outside (the cancel token) or the
round's time limit cuts a streaming model call or running tools short within a
second, and the round's time warning is given when it falls due, mid-call if need be.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Literal, TypeVar

from agents.events import EventType
from agents.run.context import RunContext
from agents.state import LimitHit, Metric

# How long to wait for a cancelled stream or tool to clean up (closing connections).
CLEANUP_SECONDS = 0.5

T = TypeVar("T")
StopCause = Literal["cancel", "timeout"]


async def until_stopped(run: RunContext, work: Awaitable[T]) -> StopCause | None:
    """Await `work` unless a cancel or the time limit comes first; then stop it."""
    task = asyncio.ensure_future(work)
    if run.stopper is None:
        run.stopper = asyncio.ensure_future(run.cancel.wait())
    stopper = run.stopper
    try:
        while True:
            timeout = run.clock.to_real(run.deadline - run.clock.now())
            warn_in = time_warning_in(run)
            wait = timeout if warn_in is None else min(timeout, warn_in)
            done, _ = await asyncio.wait(
                (task, stopper), timeout=wait, return_when=asyncio.FIRST_COMPLETED
            )
            if done or warn_in is None or warn_in >= timeout:
                break
            await time_warning(run)  # a long stall or a slow tool: warn meanwhile
    except asyncio.CancelledError:
        task.cancel()
        raise
    if task in done:
        task.result()
        return None
    task.cancel()
    # Let the stream close its connection (or the tool unwind), but never wait long.
    await asyncio.wait((task,), timeout=CLEANUP_SECONDS)
    if task.done() and not task.cancelled():
        task.exception()  # retrieved so asyncio does not log it; the stop wins
    if stopper in done or run.cancel.cancelled:
        run.state.cancel_requested = True
        return "cancel"
    # Timers may fire a hair early; make sure the clock shows the limit reached.
    await asyncio.sleep(run.clock.to_real(run.deadline - run.clock.now()))
    return "timeout"


def time_warning_at(run: RunContext) -> float | None:
    """The clock reading at which the round's time warning falls due, if one is due."""
    limits = run.state.call_limits
    if limits is None or limits.time_warning is None:
        return None
    # The round's time is its elapsed_s plus what passed since the last tick (mark).
    return run.mark + limits.time_warning.at_seconds - run.state.round.elapsed_s


def time_warning_in(run: RunContext) -> float | None:
    """Real seconds until the round's time warning falls due; None if none is due."""
    at = time_warning_at(run)
    return None if at is None else run.clock.to_real(at - run.clock.now())


async def time_warning(run: RunContext) -> None:
    """Give the round's time warning as soon as it falls due, mid-call if need be."""
    state, limits, at = run.state, run.state.call_limits, time_warning_at(run)
    if limits is None or limits.time_warning is None or at is None or run.clock.now() < at:
        return
    warning, limits.time_warning = limits.time_warning, None
    state.warnings_given.append(Metric.TIME)
    hit = LimitHit(Metric.TIME, warning.at_seconds, warning.limit)
    await run.emit(
        EventType.SYSTEM_NOTICE,
        severity="warning",
        metric=hit.metric,
        value=hit.value,
        limit=hit.limit,
        text=warning.text,
    )
    if warning.hint:
        state.pending_hints.append(warning.hint)
