"""Live events, pushed: one Redis pub/sub message per journal tick, one subscription per
web process, handed out locally by conversation.

Why not the Channels layer's groups: a group send costs several Redis round trips
per run and batch, and channels-redis receives one message per round trip for a
whole process, so with 200 runs streaming (about 10,000 batches a second) a web
process fell seconds behind; past 100 sends at once its pool also refused
connections. Here a worker publishes one message per tick with every run's new
events, and each web process reads one stream of them: the Redis traffic grows
with the ticks, not with the runs or the watchers.

Pub/sub keeps nothing, and that is fine: the database is the source of truth. A
subscriber reads it first, takes pushed batches while they follow on from what
it has, and goes back to it on a gap, on a quiet spell, or while Redis is away.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis
import redis.asyncio as aioredis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections, connection
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff

from ops.heartbeat import redis_client

logger = logging.getLogger(__name__)
T = TypeVar("T")

LIVE_CHANNEL = "oracle:live"
RETRY_SECONDS = 0.5
QUEUE_SIZE = 1000  # batches a slow subscriber may lag; past it they are dropped (a gap)


def with_fresh_connection(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call `function` in a thread of our own: before, a connection the database
    dropped is replaced; after, a pooled one goes back to the pool (on SQLite the
    thread keeps its own)."""
    close_old_connections()
    try:
        return function(*args, **kwargs)
    finally:
        close_old_connections()


def database_read(function: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """`function` (a read) made awaitable, run in the event loop's thread pool rather
    than in the one thread Django keeps for sync code: the reads of many streams must
    not queue behind each other, nor behind page views waiting on a database lock."""
    return sync_to_async(functools.partial(with_fresh_connection, function), thread_sensitive=False)


def release_connection() -> None:
    """Give this thread's pooled connection back now, so that a long response (a
    stream) does not hold one; never inside a transaction (tests run in one)."""
    if connection.settings_dict.get("OPTIONS", {}).get("pool") and not connection.in_atomic_block:
        connection.close()


def encode(batches: list[dict[str, Any]]) -> str:
    """The message of a tick: each item has `conversation_id`, `run_id`, `events` and
    `counters`."""
    return json.dumps({"runs": batches}, separators=(",", ":"), default=str)


def publish_now(batches: list[dict[str, Any]]) -> None:
    """Publish from synchronous code (best-effort: pages catch up from the database)."""
    client = redis_client(timeout=1.0)
    try:
        client.publish(LIVE_CHANNEL, encode(batches))
    except redis.RedisError as error:
        logger.warning("publishing live events failed (pages catch up): %r", error)
    finally:
        client.close()


def async_client() -> aioredis.Redis:
    """A Redis client for an event loop that fails at once when Redis is away."""
    return aioredis.Redis.from_url(
        settings.REDIS_URL,
        socket_timeout=2,
        socket_connect_timeout=2,
        retry=AsyncRetry(NoBackoff(), 0),
    )


class Subscription:
    """Batches of one conversation's runs, as they are published (see `Hub`)."""

    def __init__(self, hub: Hub, conversation_id: str) -> None:
        self.hub = hub
        self.conversation_id = conversation_id
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_SIZE)

    async def next(self, wait: float, run_id: str | None = None) -> dict[str, Any] | None:
        """The next batch (of `run_id`, when given), or None after `wait` seconds."""
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            try:
                batch = await asyncio.wait_for(self.queue.get(), left)
            except TimeoutError:
                return None
            if run_id is None or batch.get("run_id") == run_id:
                return batch
        return None

    def close(self) -> None:
        self.hub.unsubscribe(self)


class Hub:
    """This process's subscription to the live channel (one per event loop)."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscription]] = {}
        self._listening = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def subscribe(self, conversation_id: object) -> Subscription:
        """Listen to a conversation; waits a moment for the hub's own subscription when
        it is new, so that nothing published from now on is missed."""
        subscription = Subscription(self, str(conversation_id))
        self._subscribers.setdefault(subscription.conversation_id, set()).add(subscription)
        if self._task is None:
            self._task = asyncio.create_task(self._listen())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), 1.0)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        subscribers = self._subscribers.get(subscription.conversation_id)
        if subscribers is not None:
            subscribers.discard(subscription)
            if not subscribers:
                del self._subscribers[subscription.conversation_id]

    def dispatch(self, data: bytes | str) -> None:
        for batch in json.loads(data).get("runs", []):
            for subscription in self._subscribers.get(str(batch.get("conversation_id")), ()):
                with contextlib.suppress(asyncio.QueueFull):  # a gap: it reads the database
                    subscription.queue.put_nowait(batch)

    async def _listen(self) -> None:
        down_since = 0.0
        while True:
            client = async_client()
            pubsub = client.pubsub()
            try:
                await pubsub.subscribe(LIVE_CHANNEL)
                self._listening.set()
                if down_since:
                    logger.info("live events flow again")
                    down_since = 0.0
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is not None and message["type"] == "message":
                        self.dispatch(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception as error:  # Redis away: subscribers read the database meanwhile
                self._listening.clear()
                if not down_since:
                    logger.warning("live events unavailable, pages read the database: %r", error)
                    down_since = time.monotonic()
                await asyncio.sleep(RETRY_SECONDS)
            finally:
                with contextlib.suppress(Exception):
                    # redis-py annotates PubSub.close, its alias, but not aclose.
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
                    await client.aclose()


_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}


def hub() -> Hub:
    """The hub of the running event loop (daphne has one)."""
    loop = asyncio.get_running_loop()
    if loop not in _hubs:
        _hubs[loop] = Hub()
    return _hubs[loop]
