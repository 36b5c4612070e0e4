"""How a hosted run learns that it must stop: its stop key in Redis (one MGET for every
hosted run, every `CANCEL_POLL_SECONDS`), or, while Redis is away, the flag in its row,
read with the heartbeat, which a thread of its own keeps fresh; and a run claimed again
elsewhere (thought lost) stops here, writing nothing. A run that waited (for an approval,
a Continue) reads the flag once more as it is taken up: a Stop sent with the Approve wins."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from datetime import timedelta
from typing import Any, Protocol

import redis.asyncio as aioredis
from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone

from agents.cancel import CancelToken
from agents.state import AgentState
from chat.models import Run, RunStatus
from runs.control import cancel_key


class Hosting(Protocol):
    """What is read here of the process's run host (`runs.host.RunHost`)."""

    leases_lock: threading.Lock
    leases: dict[str, int]  # run id -> lease: the runs it hosts, for the heartbeat thread
    stopping: threading.Event
    loop: asyncio.AbstractEventLoop | None
    runs: dict[str, Any]  # run id -> HostedRun, on the loop only
    redis: aioredis.Redis

    def taken_over(self, run_id: str) -> None: ...

    def cancel_threadsafe(self, run_id: str) -> None: ...


logger = logging.getLogger(__name__)
CANCEL_POLL_SECONDS = 0.2
# The actions that take up a run that waited: a Stop asked since it was queued wins.
GOING_ON = ("approve", "continue", "resume")


def stop_asked(run_id: str) -> bool:
    """Whether a Stop was asked for since the run was last queued (`runs.control`)."""
    return Run.objects.filter(pk=run_id, cancel_requested_at__isnull=False).exists()


def stopped_before_going_on(action: str, state: AgentState | None, cancel: CancelToken) -> str:
    """The action of a run whose Stop came with (or after) the Approve, Continue or
    Resume that queued it, read before the engine takes it up: Stop wins (SPEC 6a). Calls
    that waited for approval are closed, not run, and the run ends cancelled ("stop");
    any other run ends cancelled before its next model or tool call (`cancel` is set)."""
    logger.info("a run stopped before it went on (%s)", action)
    if state is not None and state.awaiting_approval:
        return "stop"
    cancel.cancel()
    return action


def beat_forever(host: Hosting) -> None:
    """Every hosted run's heartbeat, from a thread of its own, so that a busy event
    loop (a slow import, a long tool) is not mistaken for a dead worker. Also reads
    stops asked for while Redis was away (kept in the database)."""
    interval = min(5.0, settings.ORACLE_RUN_HEARTBEAT_TIMEOUT / 6)
    while not host.stopping.wait(interval):
        with host.leases_lock:
            leases = dict(host.leases)
            ids = list(leases)
        if not ids:
            continue
        try:
            close_old_connections()  # and again below: a pooled one goes back
            now = timezone.now()
            # Runs the journal wrote meanwhile have a fresh heartbeat already;
            # leaving their rows alone keeps out of the journal's transaction.
            Run.objects.filter(
                pk__in=ids,
                status=RunStatus.RUNNING,
                heartbeat_at__lt=now - timedelta(seconds=interval),
            ).update(heartbeat_at=now)
            hosted = Run.objects.filter(pk__in=ids)
            for run_id, lease, stop in hosted.values_list("pk", "lease", "cancel_requested_at"):
                if lease != leases.get(str(run_id)) and host.loop is not None:
                    # Claimed again elsewhere (thought lost): it stops here, writing nothing.
                    host.loop.call_soon_threadsafe(host.taken_over, str(run_id))
                elif stop is not None:
                    host.cancel_threadsafe(str(run_id))
        except Exception:  # the database may be briefly away; try again next time
            logger.exception("could not refresh the runs' heartbeat")
        finally:
            close_old_connections()
    connections.close_all()


async def poll_stops(host: Hosting) -> None:
    """One MGET for every hosted run's stop key, every `CANCEL_POLL_SECONDS`."""
    failing_since = 0.0
    while True:
        await asyncio.sleep(CANCEL_POLL_SECONDS)
        ids = list(host.runs)
        if not ids:
            continue
        try:
            values = await host.redis.mget([cancel_key(run_id) for run_id in ids])
        except (aioredis.RedisError, OSError) as error:
            if not failing_since:
                logger.warning("cannot read stop requests from Redis: %r", error)
            failing_since = failing_since or time.monotonic()
            continue
        if failing_since:
            logger.info("Redis answers again: stop requests are read from it")
            failing_since = 0.0
        for run_id, value in zip(ids, values, strict=True):
            hosted = host.runs.get(run_id)
            if value is not None and hosted is not None and _when(value) >= hosted.queued_at:
                hosted.cancel.cancel()


def _when(value: bytes | str) -> float:
    try:
        return float(value)
    except ValueError:
        return float("inf")  # a key written by hand: stop
