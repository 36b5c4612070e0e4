"""Waiting on a stop or a time limit (agents/run/stopping.py): the user's stop or the
round's time limit cuts work short within a second, and the time warning is given
while the work goes on."""

from __future__ import annotations

import asyncio
import time

from agents.cancel import CancelToken
from agents.clock import Clock
from agents.run.stopping import until_stopped
from agents.state import Metric, TimeWarning

from .step_run import ready_run


async def test_work_that_ends_first_is_awaited_to_its_end():
    step = ready_run()
    finished: list[str] = []

    async def work() -> None:
        await asyncio.sleep(0.01)
        finished.append("done")

    assert await until_stopped(step.run, work()) is None
    assert finished == ["done"]
    assert step.state.cancel_requested is False


async def test_the_users_stop_cuts_the_work_short_at_once():
    cancel = CancelToken()
    step = ready_run(cancel=cancel)
    cut: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cut.append("cancelled")
            raise

    asyncio.get_running_loop().call_later(0.05, cancel.cancel)
    started = time.monotonic()
    cause = await until_stopped(step.run, slow())

    assert cause == "cancel"
    assert time.monotonic() - started < 1.0
    assert cut == ["cancelled"]
    assert step.state.cancel_requested is True


async def test_the_time_limit_cuts_the_work_short_and_the_clock_shows_it_reached():
    clock = Clock(rate=100.0)  # 30 s of run time pass in 0.3 s
    step = ready_run(clock=clock, timeout_seconds=30)

    started = time.monotonic()
    cause = await until_stopped(step.run, clock.sleep(3_600))

    assert cause == "timeout"
    assert time.monotonic() - started < 1.0
    assert clock.now() >= step.run.deadline
    assert step.state.cancel_requested is False


async def test_the_time_warning_is_given_while_slow_work_goes_on():
    clock = Clock(rate=100.0)
    step = ready_run(clock=clock, timeout_seconds=60)
    limits = step.state.call_limits
    assert limits is not None
    limits.time_warning = TimeWarning(at_seconds=10, limit=60, text="10 of 60 s.", hint="Hurry.")

    assert await until_stopped(step.run, clock.sleep(20)) is None

    (notice,) = step.events.of_type("system.notice")
    assert (notice["metric"], notice["value"], notice["limit"]) == (Metric.TIME, 10, 60)
    assert notice["text"] == "10 of 60 s."
    assert step.state.pending_hints == ["Hurry."]
    assert step.state.warnings_given == [Metric.TIME]
    assert limits.time_warning is None  # given once
