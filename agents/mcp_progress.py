"""An MCP call's progress notices, thinned to what a person can read: at most one every
quarter of a second a call, the latest always shown. A server that sends thousands in a
burst would otherwise make thousands of stored events and WebSocket frames."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

PROGRESS_INTERVAL_SECONDS = 0.25

Progress = tuple[float, float | None, str | None]
Report = Callable[[float, float | None, str | None], Awaitable[None]]


class CoalescedProgress:
    """Hands `report` one call's progress at most once an `interval`: a notice that comes
    sooner waits, replaced by any later one, and is handed on when the interval ends
    (or when the call does: `finish`)."""

    def __init__(self, report: Report, *, interval: float = PROGRESS_INTERVAL_SECONDS) -> None:
        self.report = report
        self.interval = interval
        self._next = 0.0  # when the next notice may be handed on
        self._waiting: Progress | None = None
        self._timer: asyncio.Task[None] | None = None  # a notice waits for it
        self._task: asyncio.Task[None] | None = None  # the latest timer, maybe handing on
        self._sleeping = False

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        now = time.monotonic()
        if now >= self._next and self._timer is None:
            self._next = now + self.interval
            await self.report(progress, total, message)
            return
        self._waiting = (progress, total, message)
        if self._timer is None:
            self._sleeping = True
            self._timer = self._task = asyncio.create_task(self._later(self._next - now))

    async def _later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._sleeping = False  # from here it hands on, and is waited for, not cancelled
        self._timer = None
        await self._hand_on()

    async def _hand_on(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self._next = time.monotonic() + self.interval
            await self.report(*waiting)

    async def finish(self) -> None:
        """The call has ended: hand on the notice still waiting, if any."""
        task, self._timer, self._task = self._task, None, None
        if task is not None:
            if self._sleeping:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._hand_on()
