"""Live events of a conversation pushed through the channel layer, for the SSE stream.

The database stays the source of truth: a subscriber reads from it first, takes
pushed batches while they follow on from what it has, and goes back to the
database on a gap, on a quiet spell, or while the channel layer is away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from channels.layers import get_channel_layer

from chat.recorder import conversation_group

logger = logging.getLogger(__name__)
REJOIN_SECONDS = 5.0


class Subscription:
    """A channel of this process in a conversation's group; `next()` gives the next
    batch published for `run_id` (a list of events), or None after `wait` seconds."""

    def __init__(self, conversation_id: object, run_id: str) -> None:
        self.group = conversation_group(conversation_id)
        self.run_id = run_id
        self.layer = get_channel_layer()
        self.channel: str | None = None
        self._failed_at = self._joined_at = -REJOIN_SECONDS

    @property
    def live(self) -> bool:
        return self.channel is not None

    async def open(self) -> None:
        """Join the group; again now and then (a restarted Redis may have lost it)."""
        if self.layer is None:
            return
        now = time.monotonic()
        if now - (self._failed_at if self.channel is None else self._joined_at) < REJOIN_SECONDS:
            return
        try:
            channel = self.channel or await self.layer.new_channel()
            await asyncio.wait_for(self.layer.group_add(self.group, channel), 2.0)
        except Exception as error:  # the layer is away: the database alone serves
            self._failed(error)
            return
        self.channel, self._joined_at = channel, now

    async def next(self, wait: float) -> list[dict[str, Any]] | None:
        if self.channel is None:
            await asyncio.sleep(wait)
            return None
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = await asyncio.wait_for(self.layer.receive(self.channel), left)
            except TimeoutError:
                return None
            except Exception as error:
                self._failed(error)
                return None
            if message.get("run_id") == self.run_id:
                return list(message.get("events") or [])
        return None

    async def close(self) -> None:
        if self.channel is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.layer.group_discard(self.group, self.channel), 2.0)
            self.channel = None

    def _failed(self, error: Exception) -> None:
        logger.warning("live events unavailable, reading the database instead: %r", error)
        self.channel = None
        self._failed_at = time.monotonic()
