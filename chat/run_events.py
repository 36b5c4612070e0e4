"""A run's events as a Server-Sent Events stream (`GET /api/runs/{id}/events/`): what is
saved after the client's `Last-Event-ID`, then what the run publishes, until it
finishes or pauses."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from accounts.api_auth import authenticate, error
from agents.events import EventType
from chat.api import run_or_404
from chat.models import Run, RunEvent, RunStatus
from runs.live import database_read, hub, release_connection

EVENT_NUMBER = re.compile("[0-9]{1,18}")  # ASCII digits: str.isdigit() takes "²" too

# Pushed batches carry the events; the database is read at the start, on a gap, and
# after this long without a push (what a lost publication costs at most).
SSE_CATCH_UP_SECONDS = 1.0
SSE_KEEPALIVE_SECONDS = 15.0
STREAM_ENDS = (EventType.RUN_FINISHED, EventType.RUN_PAUSED)


def _sse_start(request: HttpRequest, run_id: str) -> tuple[HttpResponse | None, Run | None]:
    try:
        problem = authenticate(request)
        if problem is not None:
            return problem, None
        try:
            return None, run_or_404(request, run_id)
        except Http404:
            return error(404, "No such run."), None
    finally:
        release_connection()  # not held for the whole stream


def _saved_after(run_id: UUID | str, seq: int) -> tuple[str, list[dict[str, Any]]]:
    """The run's status, then its saved events after `seq`. The status is read first: a
    run's last events and its final status are committed together, so a final status
    read first means the events read next are complete."""
    status = str(Run.objects.values_list("status", flat=True).get(pk=run_id))
    events = RunEvent.objects.filter(run_id=run_id, seq__gt=seq).order_by("seq")[:500]
    return status, [event.data for event in events]


def _sse(event: dict[str, Any]) -> str:
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {json.dumps(event)}\n\n"


@login_not_required
@csrf_exempt
async def run_events(request: HttpRequest, run_id: str) -> HttpResponse | StreamingHttpResponse:
    """SSE: every event of the run after `Last-Event-ID`, then live, until it ends or pauses."""
    if request.method != "GET":
        return error(405, "Use GET.")
    problem, run = await sync_to_async(_sse_start)(request, run_id)
    if problem is not None:
        return problem
    assert run is not None
    raw_last = request.headers.get("Last-Event-ID") or request.GET.get("after") or "0"
    if not EVENT_NUMBER.fullmatch(raw_last):
        return error(400, "Last-Event-ID must be an event number.")

    async def stream(last: int) -> AsyncIterator[str]:
        # Subscribed before reading the database: nothing falls in between.
        live = await hub().subscribe(run.conversation_id)
        quiet_since = time.monotonic()
        from_database = True
        try:
            while True:
                if from_database:
                    status, events = await database_read(_saved_after)(run.pk, last)
                gap = False
                for event in events:
                    if event["seq"] != last + 1:
                        gap = True
                        break
                    last = event["seq"]
                    yield _sse(event)
                    if event["type"] in STREAM_ENDS:
                        return
                if gap:
                    from_database = True  # read the database again
                    continue
                if events:
                    quiet_since = time.monotonic()
                elif from_database and status in (RunStatus.FINISHED, RunStatus.PAUSED):
                    return  # everything was sent; nothing more until a Continue
                pushed = await live.next(SSE_CATCH_UP_SECONDS, run_id=str(run.pk))
                from_database = pushed is None  # a quiet spell: back to the database
                events = [] if pushed is None else [e for e in pushed["events"] if e["seq"] > last]
                if pushed is None and time.monotonic() - quiet_since > SSE_KEEPALIVE_SECONDS:
                    quiet_since = time.monotonic()
                    yield ": keep-alive\n\n"
        finally:
            live.close()

    response = StreamingHttpResponse(stream(int(raw_last)), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
