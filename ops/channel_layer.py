"""The channel layer: channels-redis, riding out Redis going away.

channels-redis raises from `receive()` when Redis drops, which ends a consumer and
with it the browser's WebSocket, and leaves an SSE stream with nothing to wait on.
Here a receive waits and tries again until Redis is back; sending and joining
groups still raise, and their callers treat them as best-effort.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from channels_redis.core import RedisChannelLayer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)
RETRY_SECONDS = 0.5


class ResilientRedisChannelLayer(RedisChannelLayer):
    """A `RedisChannelLayer` whose `receive` survives Redis restarts."""

    _warned_at = 0.0

    async def receive(self, channel: str) -> Any:
        while True:
            try:
                return await super().receive(channel)
            except (RedisConnectionError, RedisTimeoutError, OSError) as error:
                now = time.monotonic()
                if now - ResilientRedisChannelLayer._warned_at > 10:
                    logger.warning("channel layer: Redis is away, waiting for it: %r", error)
                    ResilientRedisChannelLayer._warned_at = now
                await asyncio.sleep(RETRY_SECONDS)
