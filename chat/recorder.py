"""What a run produces, written down as it is produced: the main chain (`Message` rows)
and the events (`RunEvent` rows), then published to the web processes.

Each run has a `RunRecorder`, the engine's event sink, which folds events into
message rows in memory. One `Journal` per worker process commits every run's
pending rows and events together, in one transaction per tick, and only then
publishes them, in one message (`chat.live`). So a client never sees what the
database does not have, and a reconnecting client reads the rest back from it.

Persisting is not best-effort, publishing is: a failed write is retried at the
next tick with nothing dropped; a failed publish is logged and forgotten (the
pages and SSE catch up from the database).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Field, Model
from django.utils import timezone

from agents.events import EventType
from chat import subagents
from chat.live import encode, with_fresh_connection
from chat.models import COUNTERS, Conversation, Message, Role, Run, RunEvent
from ops import limit_log

logger = logging.getLogger(__name__)
Publish = Callable[[str], Awaitable[Any]]  # sends one encoded message to every web process

# What a System message's row keeps of its `system.notice` event, besides the text. A
# model's failure adds its kind (`problem`) and the provider's own words (`detail`, for
# staff: the chat never shows them).
NOTICE_FIELDS = ("severity", "metric", "value", "limit", "reason", "problem", "detail")
# And the facts a notice carries only when it has them: the pattern a run stopped for no
# progress repeated, the spending cap a run ended at (`LimitHit.facts`).
NOTICE_FACTS = ("pattern", "cap")
PUBLISH_TIMEOUT_SECONDS = 2.0
RUNS_AT_INTERVAL = 10  # up to this many runs, ticks come every `interval` (see Journal.pace)
MAX_PACE_SECONDS = 0.1
READ_AHEAD_SECONDS = 0.005  # streams are read this long before a tick (Journal.read_pause)
# A run whose rows cannot be written this many ticks in a row gives up closing (the
# sweeper then marks it interrupted); other runs go on being written.
MAX_WRITE_FAILURES = 50


def notice_metadata(notice: dict[str, Any]) -> dict[str, Any]:
    """What a System message's row keeps of its `system.notice` event, besides the text."""
    metadata = {key: notice.get(key) for key in NOTICE_FIELDS}
    metadata.update({key: notice[key] for key in NOTICE_FACTS if notice.get(key)})
    return metadata


def cancel_key(run_id: object) -> str:
    """The Redis key whose presence asks the worker running `run_id` to stop."""
    return f"oracle:run:{run_id}:cancel"


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


@dataclass
class Batch:
    """One run's share of a tick: events, new and changed rows, run fields."""

    recorder: RunRecorder
    events: list[dict[str, Any]]
    new: list[Message]
    dirty: dict[int, Message]
    run_fields: dict[str, Any]
    closing: bool
    whole: set[int] = field(default_factory=set)  # dirty rows changed past their content
    new_rows: list[dict[str, Any]] = field(default_factory=list)
    updates: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.events or self.new_rows or self.updates or self.run_fields)


class RunRecorder:
    """The event sink of one run: keeps its main chain and events until the journal
    writes them. Call it with each engine event."""

    def __init__(
        self, run: Run, journal: Journal, *, tool_steps: dict[str, Message] | None = None
    ) -> None:
        self.run = run
        self.run_id = str(run.pk)
        self.conversation_id = run.conversation_id
        self.conversation_key = str(run.conversation_id)  # as published, every tick
        self.journal = journal
        self.seq = run.last_event_seq
        self.pending: list[dict[str, Any]] = []
        self.assistant: Message | None = None
        self.tools: dict[str, Message] = dict(tool_steps or {})
        self.dirty: dict[int, Message] = {}  # by id(): rows may be unsaved
        # Those of the dirty rows changed in more than their content: a streaming answer
        # only grows, and writing its other fields again each tick cost as much as it.
        self.whole: set[int] = set()
        self.new: list[Message] = []
        self.counters: dict[str, Any] = {}
        self.state: Any = None  # the engine's live state, once checkpointed
        self.final_message: Message | None = None
        self.checkpoint_json: str | None = None
        self.run_fields: dict[str, Any] = {}
        self.failures = 0
        self.closing = False
        self.closed: asyncio.Future[None] | None = None
        self.lost = False  # taken over by another worker's claim: nothing more is written
        self.on_lost: Callable[[], object] | None = None

    # --- receiving events -----------------------------------------------------------

    async def __call__(self, event: dict[str, Any]) -> None:
        if self.lost:
            return
        kind = event["type"]
        data = {k: v for k, v in event.items() if k not in ("type", "seq")}
        if kind == EventType.ASSISTANT_DELTA and self.pending and self.pending[-1]["type"] == kind:
            self.pending[-1]["text"] += data["text"]  # coalesce a burst of tokens
        else:
            self.seq += 1
            self.pending.append({"type": kind, "seq": self.seq, **data})
        self._apply(kind, data)
        if kind in limit_log.EVENT_TYPES:  # tested first: a token's delta costs no more
            limit_log.record(self.run, self.pending[-1], self.live_counters())  # as stored
        self.journal.wake()

    async def checkpoint(self, state: Any) -> None:
        """Keep the engine's whole state (between iterations) for the next write,
        with the run's counters so far for the gauges and the API."""
        if self.lost:
            return
        self.checkpoint_json = state.to_json()
        self.counters = state.counters()
        self.state = state
        self.journal.wake()

    def live_counters(self) -> dict[str, Any]:
        """The counters as they are now, for the gauges: the engine counts a call when
        it begins, and its state is checkpointed only between calls."""
        return self.counters if self.state is None else self.state.counters()

    def _apply(self, kind: str, data: dict[str, Any]) -> None:
        """Fold an event into the main-chain rows (in memory until the next write)."""
        if kind == EventType.ASSISTANT_DELTA:
            message = self.assistant or self._new_message(Role.ASSISTANT, "", {"final": False})
            self.assistant = message
            message.content += data["text"]
            self._touch(message, whole=False)
        elif kind == EventType.ASSISTANT_MESSAGE:
            message = self.assistant or self._new_message(Role.ASSISTANT, "", {})
            message.content = data.get("text") or ""
            message.metadata = {
                "final": bool(data.get("final")),
                "tool_calls": data.get("tool_calls") or [],
            }
            if data.get("final"):
                self.final_message = message
            self.assistant = None
            self._touch(message)
        elif kind == EventType.TOOL_CALL:
            self.assistant = None
            meta = {
                "id": data.get("id"),
                "name": data.get("name"),
                "arguments": data.get("arguments"),
            }
            message = self._new_message(Role.TOOL, "", {**meta, "status": "running"})
            self.tools[str(data.get("id"))] = message
        elif kind == EventType.TOOL_RESULT:
            message = self.tools.get(str(data.get("id"))) or self._new_message(
                Role.TOOL, "", {"id": data.get("id"), "name": data.get("name")}
            )
            message.content = str(data.get("content", ""))
            message.metadata = {**message.metadata, "ok": bool(data.get("ok")), "status": "done"}
            if data.get("attachments"):  # an MCP tool's images, for the chat to show
                message.metadata["attachments"] = data["attachments"]
            if "subagent" in message.metadata:  # one its run outlived unfinished is dropped
                message.metadata["subagent"] = subagents.discard(message.metadata["subagent"])
            self._touch(message)
        elif kind.startswith("subagent."):
            step = self.tools.get(str(data.get("call_id")))
            saved = step.metadata.get("subagent") if step is not None else None
            sub = subagents.fold(saved, {"type": kind, **data})
            if step is not None and sub is not None:
                step.metadata = {**step.metadata, "subagent": sub}
                self._touch(step)
        elif kind == EventType.SYSTEM_NOTICE:
            self.assistant = None
            self._new_message(Role.SYSTEM, str(data.get("text", "")), notice_metadata(data))
        elif kind == EventType.RUN_FINISHED:
            self.counters = {key: data.get(key, 0) for key in COUNTERS}
            if self.final_message is not None:
                self.final_message.termination_reason = data.get("reason") or ""
                self.final_message.failure_class = data.get("failure_class") or ""
                # What the run had used when this answer ended it (the foot shows it).
                self.final_message.metadata = {
                    **self.final_message.metadata,
                    "usage": dict(self.counters),
                }
                self._touch(self.final_message)

    def _new_message(self, role: str, content: str, metadata: dict[str, Any]) -> Message:
        message = Message(
            conversation_id=self.conversation_id,
            run=self.run,
            role=role,
            content=content,
            metadata=metadata,
        )
        self.new.append(message)
        return message

    def _touch(self, message: Message, *, whole: bool = True) -> None:
        self.dirty[id(message)] = message
        if whole:
            self.whole.add(id(message))

    # --- handing over to the journal ---------------------------------------------

    async def close(self, **run_fields: Any) -> None:
        """Return once everything still pending is written, with the run's final fields."""
        self.run_fields.update(run_fields)
        self.closing = True
        self.closed = asyncio.get_running_loop().create_future()
        self.journal.wake(now=True)
        await self.closed

    def take(self) -> Batch:
        """What the next write holds. Rows are snapshot here, on the event loop: events
        arriving during the write change the live objects and go in the next one."""
        run_fields = self.run_fields
        if self.checkpoint_json is not None and "state" not in run_fields:
            run_fields = {**self.counters, **run_fields, "state": json.loads(self.checkpoint_json)}
        batch = Batch(
            self, self.pending, self.new, self.dirty, run_fields, self.closing, self.whole
        )
        self.pending, self.new, self.dirty, self.run_fields = [], [], {}, {}
        self.whole = set()
        self.checkpoint_json = None
        created = {id(message) for message in batch.new}
        batch.new_rows = [_row(message) for message in batch.new]
        batch.updates = [
            (m.pk, _row(m) if k in batch.whole else {"content": m.content})
            for k, m in batch.dirty.items()
            if k not in created
        ]
        return batch

    def taken_over(self) -> None:
        """The run was claimed again elsewhere: write nothing more, and tell the host."""
        if not self.lost:
            logger.warning("run %s was resumed by another worker; stopping it here", self.run_id)
        self.lost = True
        self.pending, self.new, self.dirty, self.run_fields = [], [], {}, {}
        self.whole = set()
        self.checkpoint_json = None
        if self.on_lost is not None:
            self.on_lost()

    def give_back(self, batch: Batch) -> None:
        """A write failed: what it held goes first into the next one."""
        self.pending = batch.events + self.pending
        self.new = batch.new + self.new
        self.dirty = {**batch.dirty, **self.dirty}
        self.whole = batch.whole | self.whole
        self.run_fields = {**batch.run_fields, **self.run_fields}
        self.failures += 1

    def written(self, batch: Batch, created: list[tuple[int, int]]) -> None:
        for message, (pk, seq) in zip(batch.new, created, strict=True):
            message.pk, message.seq = pk, seq
        self.failures = 0


class Journal:
    """Writes every hosted run's batches in one transaction per tick, then publishes them.

    One per worker process (see `chat.host`). Ticks start at most every `interval`
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
                results = await self.database(_write_all, writes)
            except Exception:
                logger.warning("writing %d runs together failed; one by one", len(writes))
                results = await self.database(_write_each, writes)
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
        """One message for every run's new events (see `chat.live`), best-effort."""
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


TAKEN_OVER: list[tuple[int, int]] = []  # written() of a batch dropped: see _write_all


def _write_all(batches: list[Batch]) -> list[list[tuple[int, int]] | None]:
    """Write the batches in one transaction: each run's new rows, then every changed
    row and every run's fields in one statement per shape, then all events at once.

    A run claimed again since this worker claimed it (its lease moved on: it was
    thought lost and resumed elsewhere) is not written: its batch comes back as
    `TAKEN_OVER`, and the host stops it here."""
    with transaction.atomic():
        ids = [batch.recorder.run.pk for batch in batches]
        leases = _leases(ids)
        mine = [b for b in batches if leases.get(b.recorder.run.pk) == b.recorder.run.lease]
        if len(mine) < len(batches):
            written = _write_all(mine) if mine else []
            by_batch = dict(zip(map(id, mine), written, strict=True))
            return [by_batch.get(id(batch), TAKEN_OVER) for batch in batches]
        created: list[list[tuple[int, int]] | None] = [_create_rows(b) for b in batches]
        _update_many(Message, [update for batch in batches for update in batch.updates])
        _update_many(Run, [(batch.recorder.run.pk, _run_fields(batch)) for batch in batches])
        _insert_events([event for batch in batches for event in _events(batch)])
    return created


def _leases(ids: list[Any]) -> dict[Any, int]:
    """The runs' leases, their rows locked until the transaction ends (SQLite's write
    transaction locks the whole database already). In SQL: the ORM's query cost more
    to build than to run, on every tick (bench/README.md)."""
    connection = connections[router.db_for_write(Run)]
    quote = connection.ops.quote_name
    pk, pk_column = _concrete_field(Run, "id")
    lease_column = _concrete_field(Run, "lease")[1]
    marks = ", ".join(["%s"] * len(ids))
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    sql = (
        f"SELECT {quote(pk_column)}, {quote(lease_column)} FROM {quote(Run._meta.db_table)} "
        f"WHERE {quote(pk_column)} IN ({marks}){lock}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [pk.get_db_prep_value(key, connection) for key in ids])
        rows = cursor.fetchall()
    return {pk.to_python(key): lease for key, lease in rows}


def _write_each(batches: list[Batch]) -> list[list[tuple[int, int]] | None]:
    results: list[list[tuple[int, int]] | None] = []
    for batch in batches:
        try:
            results.extend(_write_all([batch]))
        except Exception:
            logger.exception("writing run %s failed; kept for the next try", batch.recorder.run_id)
            results.append(None)
    return results


def _events(batch: Batch) -> list[tuple[Any, int, str, dict[str, Any]]]:
    run_id = batch.recorder.run.pk
    return [(run_id, e["seq"], e["type"], e) for e in batch.events]


def _insert_events(events: list[tuple[Any, int, str, dict[str, Any]]]) -> None:
    """INSERT the events in one `executemany`. Under load a tick holds one event for
    each streaming run, and making a `RunEvent` object of each for `bulk_create` cost
    more than the database's work (bench/README.md)."""
    if not events:
        return
    connection = connections[router.db_for_write(RunEvent)]
    quote = connection.ops.quote_name
    run, run_column = _concrete_field(RunEvent, "run")
    data, data_column = _concrete_field(RunEvent, "data")
    created, created_column = _concrete_field(RunEvent, "created_at")
    columns = ", ".join(map(quote, (run_column, "seq", "type", data_column, created_column)))
    sql = f"INSERT INTO {quote(RunEvent._meta.db_table)} ({columns}) VALUES (%s, %s, %s, %s, %s)"
    now = created.get_db_prep_value(timezone.now(), connection)
    params = [
        [
            run.get_db_prep_save(run_id, connection),
            seq,
            kind,
            data.get_db_prep_save(event, connection),
            now,
        ]
        for run_id, seq, kind, event in events
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _create_rows(batch: Batch) -> list[tuple[int, int]]:
    """Insert a batch's new messages, numbered in its conversation; their (pk, seq)."""
    if not batch.new_rows:
        return []
    recorder = batch.recorder
    conversation = Conversation.objects.select_for_update().get(pk=recorder.conversation_id)
    first = conversation.last_message_seq + 1
    messages = [
        Message(conversation_id=recorder.conversation_id, run_id=recorder.run.pk,
                seq=first + offset, **row)
        for offset, row in enumerate(batch.new_rows)
    ]  # fmt: skip
    conversation.last_message_seq = first + len(messages) - 1
    conversation.save(update_fields=["last_message_seq", "updated_at"])
    Message.objects.bulk_create(messages)
    return [(m.pk, m.seq) for m in messages]


def _run_fields(batch: Batch) -> dict[str, Any]:
    fields: dict[str, Any] = {"heartbeat_at": timezone.now(), **batch.run_fields}
    if batch.events:
        fields["last_event_seq"] = batch.events[-1]["seq"]
    return fields


def _update_many(model: type[Model], updates: list[tuple[Any, dict[str, Any]]]) -> None:
    """UPDATE rows by primary key, one `executemany` for all the rows that change the
    same fields. Under load a tick changes hundreds of rows; one ORM `update()` each
    cost more than the database's work, and `bulk_update`'s CASE more still."""
    shapes: dict[tuple[str, ...], list[tuple[Any, dict[str, Any]]]] = {}
    for pk, fields in updates:
        shapes.setdefault(tuple(fields), []).append((pk, fields))
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    meta = model._meta
    pk_field, pk_column = _concrete_field(model, meta.pk.name)
    for names, rows in shapes.items():
        columns = [_concrete_field(model, name) for name in names]
        assignments = ", ".join(f"{quote(column)} = %s" for _, column in columns)
        sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(pk_column)} = %s"
        params = [
            [field.get_db_prep_save(fields[field.name], connection) for field, _ in columns]
            + [pk_field.get_db_prep_value(pk, connection)]
            for pk, fields in rows
        ]
        with connection.cursor() as cursor:
            cursor.executemany(sql, params)


def _concrete_field(model: type[Model], name: str) -> tuple[Field[Any, Any], str]:
    """The model's field `name` and its column (only a concrete field has one)."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or field.column is None:
        raise ValueError(f"{model.__name__}.{name} has no column of its own")
    return field, field.column


def _row(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "metadata": dict(message.metadata),
        "termination_reason": message.termination_reason,
        "failure_class": message.failure_class,
    }
