"""The run's time source; tests speed it up or jump it forward instead of sleeping."""

from __future__ import annotations

import asyncio
import time


class Clock:
    """Monotonic seconds, optionally running `rate` times faster than real time."""

    def __init__(self, rate: float = 1.0) -> None:
        self.rate = rate
        self._offset = 0.0

    def now(self) -> float:
        """Seconds on this clock."""
        return time.monotonic() * self.rate + self._offset

    def advance(self, seconds: float) -> None:
        """Jump forward (tests)."""
        self._offset += seconds

    def to_real(self, seconds: float) -> float:
        """How many real seconds pass while this clock moves `seconds`."""
        return max(seconds, 0.0) / self.rate

    async def sleep(self, seconds: float) -> None:
        """Sleep `seconds` of this clock."""
        await asyncio.sleep(self.to_real(seconds))
