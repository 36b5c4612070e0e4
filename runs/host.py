"""The run host: one event loop per worker process, hosting every agent run of that process.

Why one loop: runs are I/O-bound (a model stream, a tool), so one loop holds
hundreds of them. They share one Redis client, so no run's ending can close
another's connections (each run used to bring its own loop and close the channel
layer's pools when done, under the other runs' feet). One `Journal` commits
every run's output in one transaction per tick and publishes it in one message,
one thread refreshes every run's heartbeat, and one poll asks Redis (one MGET)
whether any run was stopped, so the database and Redis see a constant load per
worker process rather than one per run.

A Celery task hands its run to the host and returns: the task's thread is free
again, and a host takes up to `ORACLE_WORKER_MAX_RUNS` runs before tasks wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Coroutine
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
import uvloop
from django.conf import settings
from django.db import connection

from agents.cancel import CancelToken
from agents.state import LimitHit, Metric, TerminationReason
from runs import interruptions
from runs.control import cancel_key
from runs.journal import DatabaseThread, Journal
from runs.live import LIVE_CHANNEL, async_client
from runs.recorder import RunRecorder
from runs.stops import beat_forever, poll_stops, stop_asked
from runs.titles import retitle
from toolbox.hub import close_process_hub, process_hub

logger = logging.getLogger(__name__)

CLAIM_THREADS = 4  # the threads claiming runs and writing their endings


@dataclass
class HostedRun:
    recorder: RunRecorder
    cancel: CancelToken
    task: asyncio.Task[None]
    queued_at: float  # a stop key written before this (an earlier round's) is ignored


class RunHost:
    """Hosts runs on an event loop of its own thread. `submit` from any thread."""

    def __init__(self, *, max_runs: int) -> None:
        self._slots = threading.BoundedSemaphore(max_runs)
        self._start_lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.stopping = threading.Event()
        self.runs: dict[str, HostedRun] = {}  # on the loop only
        self.leases_lock = threading.Lock()
        self.leases: dict[str, int] = {}  # run id -> lease: a copy for the heartbeat thread
        self._tasks: set[asyncio.Task[None]] = set()  # after-run work (titles), on the loop

    # --- from other threads ----------------------------------------------------------

    def submit(self, run_id: str) -> Future[None]:
        """Host the run (claiming it first); waits while the host is full."""
        self._slots.acquire()
        try:
            loop = self._started()
            future = asyncio.run_coroutine_threadsafe(self._host(run_id), loop)
        except BaseException:
            self._slots.release()
            raise
        future.add_done_callback(lambda _: self._slots.release())
        return future

    def try_submit(self, run_id: str) -> bool:
        """Host the run if there is room now; False when the host is full."""
        if not self._slots.acquire(blocking=False):
            return False
        self._slots.release()
        self.submit(run_id)
        return True

    def shutdown(self, grace: float) -> None:
        """Let the runs finish for up to `grace` seconds; the rest end as interrupted
        (what they produced is kept, Resume offered)."""
        loop = self.loop
        if loop is None or not self._thread or not self._thread.is_alive():
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and self.active_count():
            time.sleep(0.1)
        if self.active_count():
            logger.warning("stopping with %d runs still going: interrupted", self.active_count())
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._interrupt_all(), loop).result(timeout=15)
        with contextlib.suppress(Exception):  # the MCP servers this process started end
            asyncio.run_coroutine_threadsafe(close_process_hub(), loop).result(timeout=15)
        self.stopping.set()
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=10)

    def start_tools(self) -> None:
        """Start the MCP servers on the host's loop now (the worker is starting), so a
        server that will not start is reported at once, not at the first run."""
        asyncio.run_coroutine_threadsafe(process_hub(), self._started())

    def warm_up(self) -> None:
        """As the worker starts: what the process's first run would otherwise wait for
        before its first word (the server's model's first call, see `warm_up` there)."""
        asyncio.run_coroutine_threadsafe(self._warm_up(), self._started())

    async def _warm_up(self) -> None:
        from runs.engine import model_for

        # Each database thread's connection, and the Redis client's.
        await asyncio.gather(
            self.database(_connect), *(self.claims(_connect) for _ in range(CLAIM_THREADS))
        )
        with contextlib.suppress(aioredis.RedisError, OSError):
            await self.redis.ping()
        model = model_for(settings.ORACLE_MODEL)
        warm_up = getattr(model, "warm_up", None)  # the offline model needs none
        if warm_up is None:
            return
        try:
            await warm_up()
        except Exception as error:  # the first run then does it, as before
            logger.warning("could not warm up the model's first call: %r", error)

    def active_count(self) -> int:
        with self.leases_lock:
            return len(self.leases)

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._start_lock:
            if self.loop is None:
                self._thread = threading.Thread(target=self._serve, name="oracle-runs", daemon=True)
                self._thread.start()
                self._ready.wait(30)
                beat = threading.Thread(
                    target=beat_forever, args=(self,), name="oracle-run-beat", daemon=True
                )
                beat.start()
            assert self.loop is not None
            return self.loop

    def _serve(self) -> None:
        # uvloop: the same loop in C. A streamed word wakes the loop several times
        # (the provider's socket, the journal, the publish); each wake-up costs about
        # a third as much (bench/README.md).
        loop = uvloop.new_event_loop()
        asyncio.set_event_loop(loop)
        self.database = DatabaseThread(threads=1, name="oracle-journal")
        self.claims = DatabaseThread(threads=CLAIM_THREADS, name="oracle-run-db")
        self.redis = async_client()  # no retries: the next poll or tick is the retry

        async def publish(message: str) -> None:
            await self.redis.publish(LIVE_CHANNEL, message)

        self.journal = Journal(
            self.database, publish, interval=settings.ORACLE_STREAM_FLUSH_SECONDS
        )
        background = [
            loop.create_task(self.journal.run_forever()),
            loop.create_task(poll_stops(self)),
        ]
        self.loop = loop
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            for task in background:
                task.cancel()
            self.database.close()
            self.claims.close()

    def cancel_threadsafe(self, run_id: str) -> None:
        loop = self.loop
        if loop is not None:
            loop.call_soon_threadsafe(self._cancel, run_id)

    def taken_over(self, run_id: str) -> None:
        hosted = self.runs.get(run_id)
        if hosted is not None:
            hosted.recorder.taken_over()

    def _cancel(self, run_id: str) -> None:
        hosted = self.runs.get(run_id)
        if hosted is not None:
            hosted.cancel.cancel()

    # --- on the loop -------------------------------------------------------------------

    async def _host(self, run_id: str) -> None:
        from runs.runner import claim, drive, outcome

        job = await self.claims(claim, run_id)
        if job is None:
            logger.info("run %s: nothing to do (already claimed or not queued)", run_id)
            return
        # Which worker ran which round of a run, for an operator reading the workers' logs.
        logger.info("run %s: claimed to %s (lease %d)", run_id, job.action, job.run.lease)
        recorder = RunRecorder(job.run, self.journal, **job.recorded())
        self.journal.add(recorder)
        cancel = CancelToken()
        task = asyncio.current_task()
        assert task is not None
        queued_at = job.run.queued_at.timestamp() if job.run.queued_at else 0.0
        self.runs[run_id] = HostedRun(recorder, cancel, task, queued_at)
        recorder.on_lost = task.cancel
        with self.leases_lock:
            self.leases[run_id] = job.run.lease
        try:
            try:
                result = await drive(job, recorder, cancel, lambda: self.claims(stop_asked, run_id))
            except asyncio.CancelledError:
                if recorder.lost:  # resumed by another worker: its ending is not ours
                    await recorder.close()
                    return
                grace = settings.ORACLE_WORKER_SHUTDOWN_GRACE
                hit = LimitHit(Metric.TIME, grace, grace)
                await self._end_interrupted(
                    recorder, interruptions.stopped_notice(hit), hit, resume=True
                )
                raise
            except Exception:
                logger.exception("run %s failed inside the engine", run_id)
                # A failure inside Oracle would likely fail again: the user decides.
                await self._end_interrupted(recorder, interruptions.FAILED_NOTICE, resume=False)
            else:
                await recorder.close(**outcome(result))
                with contextlib.suppress(aioredis.RedisError, OSError):
                    await self.redis.delete(cancel_key(run_id))
                if result.reason is TerminationReason.COMPLETED:
                    self._background(retitle(self.claims, run_id))
        finally:
            self.runs.pop(run_id, None)
            with self.leases_lock:
                self.leases.pop(run_id, None)

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)  # kept until done: the loop holds tasks only weakly
        task.add_done_callback(self._tasks.discard)

    async def _end_interrupted(
        self,
        recorder: RunRecorder,
        notice: str,
        hit: LimitHit | None = None,
        *,
        resume: bool = True,
    ) -> None:
        """Keep what was produced, then explain the ending (resumable)."""
        await recorder.close()
        if not recorder.lost:
            await self.claims(
                interruptions.run_interrupt,
                run_id=recorder.run_id, notice=notice, hit=hit, lease=recorder.run.lease,
                resume=resume,
            )  # fmt: skip

    async def _interrupt_all(self) -> None:
        tasks = [hosted.task for hosted in self.runs.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _connect() -> None:
    connection.ensure_connection()


_host: RunHost | None = None
_host_lock = threading.Lock()


def run_host() -> RunHost:
    """This process's run host."""
    global _host
    with _host_lock:
        if _host is None:
            _host = RunHost(max_runs=settings.ORACLE_WORKER_MAX_RUNS)
        return _host


def shutdown_host(grace: float) -> None:
    if _host is not None:
        _host.shutdown(grace)
