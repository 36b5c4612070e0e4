"""Cancelling a run from outside: a token the caller sets, or a check it polls."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable

CancelCheck = Callable[[], bool | Awaitable[bool]]


class CancelToken:
    """Set with `cancel()` (from the run's event loop) or `cancel_threadsafe()`.

    `check` is polled every `poll_interval` seconds while the run waits on the
    model or a tool, so a worker can watch e.g. a Redis key; the run stops
    within one interval of it turning true.
    """

    def __init__(self, check: CancelCheck | None = None, poll_interval: float = 0.2) -> None:
        self._event = asyncio.Event()
        self._check = check
        self._poll_interval = poll_interval
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def cancelled(self) -> bool:
        """Whether the run has been asked to stop."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Ask the run to stop."""
        self._event.set()

    def cancel_threadsafe(self) -> None:
        """Ask the run to stop from another thread."""
        if self._loop is None:
            self._event.set()
        else:
            self._loop.call_soon_threadsafe(self._event.set)

    async def wait(self) -> None:
        """Return once cancelled (polling `check` if one was given)."""
        self._loop = asyncio.get_running_loop()
        if self._check is None:
            await self._event.wait()
            return
        while not self._event.is_set():
            if await self.poll():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event.wait(), self._poll_interval)

    async def poll(self) -> bool:
        """Consult `check` once; True when the run must stop."""
        if self._event.is_set():
            return True
        if self._check is not None:
            result = self._check()
            if inspect.isawaitable(result):
                result = await result
            if result:
                self._event.set()
        return self._event.is_set()
