"""What a run produces, kept as it is produced: a `RunRecorder` per run is the engine's
event sink, and folds the run's events into its main chain (`Message` rows) in memory
until its worker's journal (`runs.journal`) writes and publishes them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.events import EventType
from chat.models import COUNTERS, Message, Role, Run
from chat.notices import compaction_metadata, notice_metadata
from ops import limit_log
from runs import subagents

logger = logging.getLogger(__name__)


class Writer(Protocol):
    """What a recorder needs of the journal that writes it (`runs.journal.Journal`)."""

    def wake(self, *, now: bool = False) -> None: ...

    def read_pause(self) -> float: ...


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
    saved: list[asyncio.Future[None]] = field(default_factory=list)  # told once it is written

    @property
    def empty(self) -> bool:
        return not (self.events or self.new_rows or self.updates or self.run_fields)


class RunRecorder:
    """The event sink of one run: keeps its main chain and events until the journal
    writes them. Call it with each engine event."""

    def __init__(
        self,
        run: Run,
        journal: Writer,
        *,
        tool_steps: dict[str, Message] | None = None,
        history_seqs: list[int] | None = None,
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
        self.marked = 0  # the calls of the step marked begun in the last checkpoint
        self.waiting: list[asyncio.Future[None]] = []  # checkpoints awaited until written
        self.run_fields: dict[str, Any] = {}
        self.failures = 0
        self.closing = False
        self.closed: asyncio.Future[None] | None = None
        self.lost = False  # taken over by another worker's claim: nothing more is written
        self.on_lost: Callable[[], object] | None = None
        # Where the run's history and question are in the conversation (a summary's
        # reach, `covers`, is kept as the seq of the last message it covers).
        self.history_seqs = history_seqs or []

    # --- receiving events -----------------------------------------------------------

    async def __call__(self, event: dict[str, Any]) -> None:
        if self.lost:
            return
        kind = event["type"]
        data = {k: v for k, v in event.items() if k not in ("type", "seq")}
        last = self.pending[-1] if self.pending else {}
        same = (last.get("type"), last.get("id")) == (kind, data.get("id"))
        if kind == EventType.ASSISTANT_DELTA and same:
            last["text"] += data["text"]  # coalesce a burst of tokens
        elif kind == EventType.TOOL_PROGRESS and same:
            last.update(data)  # a call's progress: only its latest of a tick is stored, sent
        else:
            self.seq += 1
            self.pending.append({"type": kind, "seq": self.seq, **data})
        self._apply(kind, data)
        if kind in limit_log.EVENT_TYPES:  # tested first: a token's delta costs no more
            limit_log.record(self.run, self.pending[-1], self.live_counters())  # as stored
        self.journal.wake()

    async def checkpoint(self, state: Any) -> None:
        """Keep the engine's whole state (between iterations) for the next write,
        with the run's counters so far for the gauges and the API; one that marks a
        call begun returns once written."""
        if self.lost:
            return
        self.checkpoint_json = state.to_json()
        self.counters = state.counters()
        self.state = state
        begun, self.marked = len(state.step_started) > self.marked, len(state.step_started)
        self.journal.wake(now=begun)
        if begun:  # a call that may act begins once the database knows (a tick, a few ms):
            saved = asyncio.get_running_loop().create_future()  # a lost worker's run
            self.waiting.append(saved)  # then never makes it again
            await saved

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
            if data.get("not_run"):  # why it never ran: no error of the tool's
                message.metadata["not_run"] = data["not_run"]
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
            # An answer being streamed goes on in its own row (before the notice), as
            # the page shows it live: its end is not a second row repeating its start.
            self._new_message(Role.SYSTEM, str(data.get("text", "")), notice_metadata(data))
        elif kind == EventType.CONTEXT_COMPACTED:
            self._new_message(Role.SYSTEM, str(data.get("text", "")), self._context(data))
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
                if data.get("metric"):  # the limit it ended at (its badge names it)
                    self.final_message.metadata["limit_metric"] = data["metric"]
                if data.get("instructions"):  # the user's, which it worked under
                    self.final_message.metadata["instructions"] = data["instructions"]
                self._touch(self.final_message)

    def _context(self, data: dict[str, Any]) -> dict[str, Any]:
        """A shortened context's row keeps the summary with the conversation's last
        message it covers (for the runs after to send it in their place)."""
        covers = int(data.get("covers") or 0)
        through = None
        if data.get("summarised") and 0 < covers <= len(self.history_seqs):
            through = self.history_seqs[covers - 1]
        return compaction_metadata(data, through_seq=through)

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
        batch = Batch(self, self.pending, self.new, self.dirty, run_fields, self.closing,
                      self.whole, saved=self.waiting)  # fmt: skip
        self.pending, self.new, self.dirty, self.run_fields, self.waiting = [], [], {}, {}, []
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
        self.waiting = batch.saved + self.waiting
        self.failures += 1

    def written(self, batch: Batch, created: list[tuple[int, int]]) -> None:
        for message, (pk, seq) in zip(batch.new, created, strict=True):
            message.pk, message.seq = pk, seq
        self.failures = 0
        for saved in batch.saved:
            if not saved.done():
                saved.set_result(None)


def _row(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "metadata": dict(message.metadata),
        "termination_reason": message.termination_reason,
        "failure_class": message.failure_class,
    }
