"""Worker heartbeats in Redis, so `/healthz` can count live workers in one round trip.

Each Celery worker process writes `oracle:worker:<hostname>` with a short
expiry and refreshes it from a daemon thread; a worker that dies simply stops
refreshing and drops out of the count within `HEARTBEAT_TTL` seconds.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

import redis
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

logger = logging.getLogger(__name__)

KEY_PREFIX = "oracle:worker:"
HEARTBEAT_TTL = 30
HEARTBEAT_INTERVAL = 10

_stop = threading.Event()
_hostname: str | None = None


def redis_client(timeout: float = 2.0) -> redis.Redis:
    """A client of the configured (or embedded) Redis that fails at once when Redis is
    away (redis-py would otherwise retry with backoff for up to ~15 s): its callers
    answer a request or try again on their next round."""
    return redis.Redis.from_url(
        settings.REDIS_URL,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )


def live_worker_count(client: redis.Redis) -> int:
    return sum(1 for _ in client.scan_iter(match=f"{KEY_PREFIX}*", count=100))


def live_workers(client: redis.Redis) -> set[str]:
    """The names of the workers with a fresh heartbeat."""
    keys = client.scan_iter(match=f"{KEY_PREFIX}*", count=100)
    return {(key.decode() if isinstance(key, bytes) else key)[len(KEY_PREFIX) :] for key in keys}


def worker_name() -> str:
    """This worker's name, as its heartbeat gives it ("" in a process that is no worker)."""
    return _hostname or ""


def _beat(hostname: str) -> None:
    client = redis_client()
    while not _stop.is_set():
        try:
            client.set(f"{KEY_PREFIX}{hostname}", str(time.time()), ex=HEARTBEAT_TTL)
        except redis.RedisError as error:
            logger.warning("worker heartbeat failed: %s", error)
        _stop.wait(HEARTBEAT_INTERVAL)
    with contextlib.suppress(redis.RedisError):
        client.delete(f"{KEY_PREFIX}{hostname}")


def _on_worker_ready(sender: object, **_: object) -> None:
    global _hostname
    _hostname = str(getattr(sender, "hostname", "worker"))
    _stop.clear()
    threading.Thread(target=_beat, args=(_hostname,), name="oracle-heartbeat", daemon=True).start()


def _on_worker_shutdown(**_: object) -> None:
    _stop.set()
    if _hostname:
        with contextlib.suppress(redis.RedisError):
            redis_client().delete(f"{KEY_PREFIX}{_hostname}")


def connect_worker_signals() -> None:
    worker_ready.connect(_on_worker_ready, weak=False, dispatch_uid="oracle-heartbeat-ready")
    worker_shutdown.connect(
        _on_worker_shutdown, weak=False, dispatch_uid="oracle-heartbeat-shutdown"
    )
