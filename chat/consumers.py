"""The conversation WebSocket: live events of its runs, as htmx out-of-band fragments.

The browser says which run it shows and the last event `seq` it has
(`{"type": "sync", "run_id": ..., "last_seq": N}`, on every (re)connect);
the consumer replays the saved events after N, then forwards live ones. Every
batch is checked against the last seq sent: a duplicate is dropped, and a gap
(a lost publication) is filled from the database, so the browser never misses
or repeats an event. Batches of a run the page has not named yet wait for its
sync during the socket's first second (the page sends it as the socket opens).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections import deque
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from chat.fragments import stream_state
from chat.models import COUNTERS, Conversation, Message, Run, RunEvent
from chat.run_view import RunView
from runs.live import database_read, hub

logger = logging.getLogger(__name__)
MAX_FRAME_BYTES = 4096
CATCH_UP_SECONDS = 2.0
SYNC_GRACE_SECONDS = 1.0
FRAME_WINDOW_SECONDS = 10.0


class ConversationConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        conversation_id = self.scope["url_route"]["kwargs"]["conversation_id"]
        if user is None or not user.is_authenticated or not await _owns(user, conversation_id):
            await self.close(code=4404)  # another user's conversation does not exist
            return
        self.conversation_id = conversation_id
        self.views: dict[str, RunView] = {}
        self.sent: dict[str, int] = {}
        self.lock = asyncio.Lock()
        self.opened = time.monotonic()
        self.deferred: set[str] = set()  # runs pushed before the page said what it has
        self.pushed_at: dict[str, float] = {}  # when each run's last batch came
        self.frames: deque[float] = deque()  # when the last frames came (the flood guard)
        self.warned_flood = False
        self.live = await hub().subscribe(conversation_id)
        await self.accept()
        self.tasks = [
            asyncio.create_task(self._forward_loop()),
            asyncio.create_task(self._catch_up_loop()),
        ]

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "live"):
            self.live.close()
            for task in self.tasks:
                task.cancel()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if await self._flooded():
            return
        frame = text_data if text_data is not None else (bytes_data or b"").decode(errors="replace")
        if len(frame.encode()) > MAX_FRAME_BYTES:
            await self._error("Frame too large.")
            return
        try:
            data = json.loads(frame)
        except (ValueError, RecursionError):  # nested past the recursion limit
            await self._error("Frames must be JSON.")
            return
        if not isinstance(data, dict) or data.get("type") != "sync":
            await self._error('Send {"type": "sync", "run_id": "...", "last_seq": 0}.')
            return
        run_id, last_seq = data.get("run_id"), data.get("last_seq", 0)
        if not isinstance(run_id, str) or type(last_seq) is not int or last_seq < 0:
            await self._error("run_id must be a string and last_seq a whole number.")
            return
        async with self.lock:
            saved = await _events_after(run_id, 0, conversation_id=self.conversation_id)
            if saved is None:
                await self._error("No such run in this conversation.")
                return
            # A fresh view fed every saved event; only those after what the page has are
            # sent: after last_seq, and after what this socket sent it of the run already
            # (a run pushed before the sync was read, as under heavy load).
            self.deferred.discard(run_id)
            self.views[run_id] = RunView(run_id, self.conversation_id)
            self.sent[run_id] = max(last_seq, self.sent.get(run_id, 0))
            await self._show(run_id, saved, show_gauges=True)  # even with nothing new to send

    async def _flooded(self) -> bool:
        """Whether this frame is one too many (more than ORACLE_WS_FRAMES_PER_10S in the
        last 10 seconds): it is dropped, and the first of a burst gets an error frame."""
        now = time.monotonic()
        while self.frames and now - self.frames[0] > FRAME_WINDOW_SECONDS:
            self.frames.popleft()
        if len(self.frames) < settings.ORACLE_WS_FRAMES_PER_10S:
            self.frames.append(now)
            self.warned_flood = False
            return False
        if not self.warned_flood:
            self.warned_flood = True
            await self._error("Too many frames: slow down.")
        return True

    async def _forward_loop(self) -> None:
        """Batches published by workers, in the order they come."""
        while True:
            batch = await self.live.next(3600)
            if batch is not None:
                await self.run_events(batch)

    async def run_events(self, message: dict[str, Any]) -> None:
        """A batch published by a worker: a run's events after those it sent before."""
        run_id = message["run_id"]
        async with self.lock:
            if run_id not in self.views:
                if time.monotonic() - self.opened < SYNC_GRACE_SECONDS:
                    # The page's sync, sent as the socket opens, says what it already
                    # has of this run; sending it all now would show it twice.
                    self.deferred.add(run_id)
                    return
                await self._new_view(run_id)  # a run that started after this page loaded
            if message.get("counters"):
                self.views[run_id].set_counters(message["counters"])
            self.pushed_at[run_id] = time.monotonic()
            await self._feed(run_id, message["events"])

    async def _new_view(self, run_id: str) -> None:
        """A view of a run the page did not have: it starts with the question it answers
        (sent from another tab, or by the API), or redraws the page's history when the
        run reshapes it (another answer to a message, an edited message)."""
        asked, reshapes = await _question_of(run_id)
        self.views[run_id] = RunView(run_id, self.conversation_id, asked=asked, reshapes=reshapes)
        self.sent[run_id] = 0

    async def _catch_up_loop(self) -> None:
        """Whatever was not pushed (everything while Redis was away, a batch dropped
        behind a slow socket) arrives anyway, from the database: a running run's rest
        is read there once nothing was pushed of it for `CATCH_UP_SECONDS`. While its
        batches come, a missing one shows as a gap in the next (see `_feed`)."""
        while True:
            await asyncio.sleep(CATCH_UP_SECONDS)
            try:
                async with self.lock:
                    for run_id in self.deferred - set(self.views):  # no sync came for it
                        await self._new_view(run_id)
                        await self._refill(run_id)
                    self.deferred.clear()
                    quiet_since = time.monotonic() - CATCH_UP_SECONDS
                    for run_id, view in list(self.views.items()):
                        if (
                            view.status == "running"
                            and self.pushed_at.get(run_id, 0) <= quiet_since
                        ):
                            await self._refill(run_id)
            except Exception:  # a database hiccup must not end the stream
                logger.exception("catching up conversation %s failed", self.conversation_id)

    async def _refill(self, run_id: str) -> None:
        saved = await _events_after(run_id, self.views[run_id].rendered)
        if saved is not None:  # None only for a run id that is no UUID
            await self._show(run_id, saved)

    async def _show(
        self,
        run_id: str,
        saved: tuple[list[dict[str, Any]], dict[str, Any]],
        *,
        show_gauges: bool = False,
    ) -> None:
        """Feed a run's saved events and counters, read from the database."""
        events, counters = saved
        self.views[run_id].set_counters(counters)
        await self._feed(run_id, events, from_database=True, show_gauges=show_gauges)

    async def _feed(
        self,
        run_id: str,
        events: list[dict[str, Any]],
        *,
        from_database: bool = False,
        show_gauges: bool = False,
    ) -> None:
        """Render events in order; send the fragments of those the browser lacks."""
        view = self.views[run_id]
        fragments = []
        for event in events:
            seq = event["seq"]
            if seq <= view.rendered:
                continue  # a duplicate
            if seq != view.rendered + 1:
                if not from_database:
                    await self._refill(run_id)  # a gap: a batch went missing
                return
            html = view.render(event)
            view.rendered = seq
            if seq > self.sent[run_id]:
                fragments.append(html)
        if not fragments and not show_gauges:
            return
        self.sent[run_id] = view.rendered
        fragments.append(view.gauges_if_changed(always=show_gauges))
        fragments.append(stream_state(run_id, view.rendered))
        await self.send(text_data="".join(fragments))

    async def _error(self, text: str) -> None:
        await self.send(text_data=json.dumps({"type": "error", "error": text}))


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


@database_read
def _owns(user: Any, conversation_id: str) -> bool:
    key = _uuid(conversation_id)
    if key is None:
        return False
    return Conversation.objects.filter(owner=user, id=key, deleted_at__isnull=True).exists()


@database_read
def _question_of(run_id: str) -> tuple[Message | None, bool]:
    """The message the run answers, to show with it, and whether the run reshapes the
    conversation's history: another answer to a message answered before, or a message
    edited (then the page draws its history again, versions and all)."""
    key = _uuid(run_id)
    run = Run.objects.select_related("user_message").filter(pk=key).first() if key else None
    message = run.user_message if run is not None else None
    if run is None or message is None:
        return None, False
    if (message.metadata or {}).get("edit_of"):
        return None, True
    answered_before = Run.objects.filter(user_message=message, created_at__lt=run.created_at)
    return (None, True) if answered_before.exists() else (message, False)


@database_read
def _events_after(
    run_id: str, seq: int, *, conversation_id: str | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The saved events after `seq`, and the run's counters as last saved. With
    `conversation_id`, None when the run is not one of that conversation's: a page's
    sync is checked and read in one trip to the database."""
    key = _uuid(run_id)
    if key is None:
        return None
    runs = Run.objects.filter(pk=key)
    if conversation_id is not None:
        runs = runs.filter(conversation_id=conversation_id)
    counters = runs.values(*COUNTERS).first()
    if counters is None and conversation_id is not None:
        return None
    events = RunEvent.objects.filter(run_id=key, seq__gt=seq).order_by("seq")
    return [event.data for event in events], counters or {}
