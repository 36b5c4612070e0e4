"""A worker's journal: every hosted run's pending rows and events written together, in
one transaction per tick, and only then published to the web processes, in one message
(`runs.live`). So a client never sees what the database does not have, and a
reconnecting client reads the rest back from it.

Persisting is not best-effort, publishing is: a failed write is retried at the
next tick with nothing dropped; a failed publish is logged and forgotten (the
pages and SSE catch up from the database).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connections

from runs.journal_writes import TAKEN_OVER, write_all, write_each
from runs.live import encode, with_fresh_connection
from runs.recorder import Batch, RunRecorder

logger = logging.getLogger(__name__)
Publish = Callable[[str], Awaitable[Any]]  # sends one encoded message to every web process

PUBLISH_TIMEOUT_SECONDS = 2.0
RUNS_AT_INTERVAL = 10  # up to this many runs, ticks come every `interval` (see Journal.pace)
MAX_PACE_SECONDS = 0.1
READ_AHEAD_SECONDS = 0.005  # streams are read this long before a tick (Journal.read_pause)
# A run whose rows cannot be written this many ticks in a row gives up closing (the
# sweeper then marks it interrupted); other runs go on being written.
MAX_WRITE_FAILURES = 50


class DatabaseThread:
    """Database work off the event loop, in threads of its own (one keeps writes in order)."""

    def __init__(self, threads: int = 1, name: str = "oracle-db") -> None:
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)
        self._threads = threads

    async def __call__(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, lambda: with_fresh_connection(function, *args, **kwargs)
        )

    def close(self) -> None:
        for _ in range(self._threads):  # each thread closes its own connections
            self._executor.submit(connections.close_all)
        self._executor.shutdown(wait=True)


class Journal:
    """Writes every hosted run's batches in one transaction per tick, then publishes them.

    One per worker process (see `runs.host`). Ticks start at most every `interval`
    seconds while anything is pending; a run that is closing is written at once.
    """

    def __init__(self, database: DatabaseThread, publish: Publish, *, interval: float) -> None:
        self.database = database
        self.publish = publish
        self.interval = interval
        self.recorders: set[RunRecorder] = set()
        self._wake = asyncio.Event()
        self._now = asyncio.Event()
        self._publish_failed_at = 0.0
        self._next_tick = 0.0  # when the pause after the last tick ends (monotonic)

    def add(self, recorder: RunRecorder) -> None:
        self.recorders.add(recorder)

    def wake(self, *, now: bool = False) -> None:
        self._wake.set()
        if now:
            self._now.set()

    def pace(self) -> float:
        """The time between ticks: `interval`, longer with many runs streaming.

        What a tick costs grows with the runs it writes (a row each, a frame to each
        page and stream watching one), hardly with the words each run brings. With
        one word of each run in every tick, 50 runs streaming spent most of the
        machine on those; a few words each cost little more than one (bench/README.md).
        So past `RUNS_AT_INTERVAL` runs the pause grows with them, up to
        `MAX_PACE_SECONDS`, and never below `interval`."""
        crowd = len(self.recorders) / RUNS_AT_INTERVAL
        return max(self.interval, min(self.interval * crowd, MAX_PACE_SECONDS))

    def read_pause(self) -> float:
        """How long a run's model stream may go unread now (`LiteLLMModel.read_pause`):
        until just before the next tick while the pace is above the interval, since
        the words read before then wait for that tick anyway. A network read costs
        about as much as the word it brings; with 50 runs streaming, a read every
        tick rather than every word took a third of the worker's CPU off (bench/README.md).
        0 with few runs: each word is read, written and sent as it comes."""
        if self.pace() <= self.interval:
            return 0.0
        return max(0.0, self._next_tick - time.monotonic() - READ_AHEAD_SECONDS)

    async def run_forever(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._now.clear()
            began = time.monotonic()
            self._next_tick = began + self.pace()
            try:
                await self.tick()
            except Exception:  # never let one bad tick end the writing of every run
                logger.exception("writing the runs' output failed; trying again")
            # Coalesce what streams meanwhile. Under load a tick takes longer than the
            # interval, and the next one starts at once with a bigger batch.
            rest = self.pace() - (time.monotonic() - began)
            if rest > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._now.wait(), rest)

    async def tick(self) -> None:
        # In one order (the runs' ids), so that two writers never wait on each other.
        recorders = sorted(self.recorders, key=lambda recorder: recorder.run_id)
        batches = [recorder.take() for recorder in recorders]
        batches = [b for b in batches if not b.empty or b.closing]
        writes = [b for b in batches if not b.empty]
        if writes:
            try:
                results = await self.database(write_all, writes)
            except Exception:
                logger.warning("writing %d runs together failed; one by one", len(writes))
                results = await self.database(write_each, writes)
            for batch, created in zip(writes, results, strict=True):
                if created is TAKEN_OVER:
                    batch.recorder.taken_over()
                elif created is None:
                    batch.recorder.give_back(batch)
                    self._wake.set()
                else:
                    batch.recorder.written(batch, created)
            written = zip(writes, results, strict=True)
            await self._publish([b for b, r in written if r is not None and r is not TAKEN_OVER])
        for batch in batches:
            recorder = batch.recorder
            if not batch.closing or recorder.closed is None or recorder.closed.done():
                continue
            if recorder.pending or recorder.new or recorder.dirty or recorder.run_fields:
                if recorder.failures < MAX_WRITE_FAILURES:
                    continue  # given back: the next tick writes it
                recorder.closed.set_exception(RuntimeError("could not write the run's output"))
            else:
                recorder.closed.set_result(None)
            self.recorders.discard(recorder)

    async def _publish(self, written: list[Batch]) -> None:
        """One message for every run's new events (see `runs.live`), best-effort."""
        batches = [
            {
                "conversation_id": batch.recorder.conversation_key,
                "run_id": batch.recorder.run_id,
                "events": batch.events,
                "counters": batch.recorder.live_counters(),
            }
            for batch in written
            if batch.events
        ]
        if not batches:
            return
        try:
            await asyncio.wait_for(self.publish(encode(batches)), PUBLISH_TIMEOUT_SECONDS)
        except Exception as error:  # clients catch up from the database
            now = time.monotonic()
            if now - self._publish_failed_at > 10:
                logger.warning("publishing run events failed (clients catch up): %r", error)
            self._publish_failed_at = now
