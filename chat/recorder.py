"""The event sink of a run in a worker: writes the main chain as it is produced and
publishes the events, coalesced, to the conversation's channel-layer group.

Ordering is what makes reconnects exact: a batch of events is committed to the
database (as `RunEvent` rows with contiguous `seq`, and as `Message` rows) and
only then published. A client that missed a publication reads it back from the
database; a client never sees anything the database does not have.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from channels.layers import get_channel_layer
from django.db import close_old_connections, connections, transaction
from django.utils import timezone

from chat.models import Conversation, Message, Role, Run, RunEvent

COUNTERS = ("iterations", "tool_calls", "tokens", "cost_usd", "elapsed_ms")


def conversation_group(conversation_id: object) -> str:
    """The Channels group that a conversation's browsers listen on."""
    return f"conversation.{conversation_id}"


def cancel_key(run_id: object) -> str:
    """The Redis key whose presence asks the worker running `run_id` to stop."""
    return f"oracle:run:{run_id}:cancel"


class DatabaseThread:
    """One thread for all database work of a run: writes stay in order, off the event loop."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="oracle-run-db")

    async def __call__(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: function(*args, **kwargs))

    async def close(self) -> None:
        await self(connections.close_all)  # this thread's connections, looked up there
        self._executor.shutdown(wait=True)


@dataclass
class _Draft:
    """Main-chain rows being written: changed rows are saved at the next flush."""

    assistant: Message | None = None
    tools: dict[str, Message] = field(default_factory=dict)
    dirty: dict[int, Message] = field(default_factory=dict)  # by id(): rows may be unsaved
    new: list[Message] = field(default_factory=list)


class RunRecorder:
    """Persist and publish the events of one run. Call it with each engine event."""

    def __init__(
        self,
        run: Run,
        database: DatabaseThread,
        *,
        flush_interval: float,
        heartbeat_interval: float = 5.0,
    ) -> None:
        self.run = run
        self.conversation_id = run.conversation_id
        self.database = database
        self.flush_interval = flush_interval
        self.heartbeat_interval = heartbeat_interval
        self.seq = run.last_event_seq
        self.pending: list[dict[str, Any]] = []
        self.draft = _Draft()
        self.counters: dict[str, Any] = {}
        self.final_message: Message | None = None
        self.checkpoint_json: str | None = None
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._stopping = False
        self._heartbeat_stop = threading.Event()
        self._heartbeat = threading.Thread(
            target=self._beat, name=f"oracle-run-heartbeat-{run.pk}", daemon=True
        )
        self._layer = get_channel_layer()
        self._flusher: asyncio.Task[None] | None = None

    # --- receiving events -----------------------------------------------------------

    async def __call__(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        data = {k: v for k, v in event.items() if k not in ("type", "seq")}
        if kind == "assistant.delta" and self.pending and self.pending[-1]["type"] == kind:
            self.pending[-1]["text"] += data["text"]  # coalesce a burst of tokens
        else:
            self.seq += 1
            self.pending.append({"type": kind, "seq": self.seq, **data})
        self._apply(kind, data)
        self._wake.set()

    async def checkpoint(self, state: Any) -> None:
        """Keep the engine's whole state (between iterations) for the next flush to save,
        with the run's counters so far for the gauges and the API."""
        self.checkpoint_json = state.to_json()
        total = state.total
        self.counters = {
            "iterations": total.iterations,
            "tool_calls": total.tool_calls,
            "tokens": total.tokens,
            "cost_usd": round(total.cost_usd, 6),
            "elapsed_ms": round(total.elapsed_s * 1000),
        }
        self._wake.set()

    def _apply(self, kind: str, data: dict[str, Any]) -> None:
        """Fold an event into the main-chain rows (in memory until the next flush)."""
        draft = self.draft
        if kind == "assistant.delta":
            message = draft.assistant or self._new_message(Role.ASSISTANT, "", {"final": False})
            draft.assistant = message
            message.content += data["text"]
            self._touch(message)
        elif kind == "assistant.message":
            message = draft.assistant or self._new_message(Role.ASSISTANT, "", {})
            message.content = data.get("text") or ""
            message.metadata = {
                "final": bool(data.get("final")),
                "tool_calls": data.get("tool_calls") or [],
            }
            if data.get("final"):
                self.final_message = message
            draft.assistant = None
            self._touch(message)
        elif kind == "tool.call":
            draft.assistant = None
            meta = {
                "id": data.get("id"),
                "name": data.get("name"),
                "arguments": data.get("arguments"),
            }
            message = self._new_message(Role.TOOL, "", {**meta, "status": "running"})
            draft.tools[str(data.get("id"))] = message
        elif kind == "tool.result":
            message = draft.tools.get(str(data.get("id"))) or self._new_message(
                Role.TOOL, "", {"id": data.get("id"), "name": data.get("name")}
            )
            message.content = str(data.get("content", ""))
            message.metadata = {**message.metadata, "ok": bool(data.get("ok")), "status": "done"}
            self._touch(message)
        elif kind == "system.notice":
            draft.assistant = None
            meta = {
                key: data.get(key) for key in ("severity", "metric", "value", "limit", "reason")
            }
            self._new_message(Role.SYSTEM, str(data.get("text", "")), meta)
        elif kind == "run.finished":
            self.counters = {key: data.get(key, 0) for key in COUNTERS}
            if self.final_message is not None:
                self.final_message.termination_reason = data.get("reason") or ""
                self.final_message.failure_class = data.get("failure_class") or ""
                self._touch(self.final_message)

    def _new_message(self, role: str, content: str, metadata: dict[str, Any]) -> Message:
        message = Message(
            conversation_id=self.conversation_id,
            run=self.run,
            role=role,
            content=content,
            metadata=metadata,
        )
        self.draft.new.append(message)
        return message

    def _touch(self, message: Message) -> None:
        self.draft.dirty[id(message)] = message

    # --- flushing -----------------------------------------------------------------

    async def start(self) -> None:
        self._flusher = asyncio.create_task(self._flush_loop())
        self._heartbeat.start()

    def _beat(self) -> None:
        """Tell the world this run's worker is alive, from a thread of its own, so that
        a busy event loop (a slow import, a long tool) is not mistaken for a dead worker."""
        try:
            while not self._heartbeat_stop.wait(self.heartbeat_interval):
                close_old_connections()
                Run.objects.filter(pk=self.run.pk).update(heartbeat_at=timezone.now())
        finally:
            connections.close_all()

    async def close(self, **run_fields: Any) -> None:
        """Write and publish everything still pending, with the run's final fields."""
        self._heartbeat_stop.set()
        await asyncio.get_running_loop().run_in_executor(None, self._heartbeat.join)
        self._stopping = True
        self._wake.set()
        if self._flusher is not None:
            await self._flusher
        await self.flush(**run_fields)

    async def _flush_loop(self) -> None:
        while not self._stopping:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=1.0)
            self._wake.clear()
            await self.flush()
            if not self._stopping:
                await asyncio.sleep(self.flush_interval)  # coalesce what streams meanwhile

    async def flush(self, **run_fields: Any) -> None:
        """Commit pending events and rows (with any `run_fields`), then publish them."""
        async with self._lock:
            events, self.pending = self.pending, []
            new, self.draft.new = self.draft.new, []
            dirty, self.draft.dirty = self.draft.dirty, {}
            if self.checkpoint_json is not None and "state" not in run_fields:
                run_fields = {
                    **self.counters,
                    **run_fields,
                    "state": json.loads(self.checkpoint_json),
                }
            self.checkpoint_json = None
            created = {id(message) for message in new}
            # Snapshots taken here, on the event loop: events arriving during the
            # write change the live objects, and are saved by the next flush.
            new_rows = [_row(message) for message in new]
            updates = [(m.pk, _row(m)) for k, m in dirty.items() if k not in created]
            if not (events or new_rows or updates or run_fields):
                return
            last_seq = events[-1]["seq"] if events else None
            pks = await self.database(self._write, events, new_rows, updates, run_fields, last_seq)
            for message, (pk, seq) in zip(new, pks, strict=True):
                message.pk, message.seq = pk, seq
            if events:
                await self._layer.group_send(
                    conversation_group(self.conversation_id),
                    {
                        "type": "run.events",
                        "run_id": str(self.run.pk),
                        "events": events,
                        "counters": self.counters,
                    },
                )

    def _write(
        self,
        events: list[dict[str, Any]],
        new_rows: list[dict[str, Any]],
        updates: list[tuple[int, dict[str, Any]]],
        run_fields: dict[str, Any],
        last_seq: int | None,
    ) -> list[tuple[int, int]]:
        close_old_connections()
        created: list[tuple[int, int]] = []
        with transaction.atomic():
            if new_rows:
                conversation = Conversation.objects.select_for_update().get(pk=self.conversation_id)
                first = conversation.last_message_seq + 1
                messages = [
                    Message(conversation_id=self.conversation_id, run_id=self.run.pk,
                            seq=first + offset, **row)
                    for offset, row in enumerate(new_rows)
                ]  # fmt: skip
                conversation.last_message_seq = first + len(messages) - 1
                conversation.save(update_fields=["last_message_seq", "updated_at"])
                Message.objects.bulk_create(messages)
                created = [(m.pk, m.seq) for m in messages]
            for pk, row in updates:
                Message.objects.filter(pk=pk).update(**row)
            if events:
                RunEvent.objects.bulk_create(
                    RunEvent(run_id=self.run.pk, seq=e["seq"], type=e["type"], data=e)
                    for e in events
                )
            fields: dict[str, Any] = {"heartbeat_at": timezone.now(), **run_fields}
            if last_seq is not None:
                fields["last_event_seq"] = last_seq
            Run.objects.filter(pk=self.run.pk).update(**fields)
        return created


def _row(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "metadata": dict(message.metadata),
        "termination_reason": message.termination_reason,
        "failure_class": message.failure_class,
    }
