"""A call's progress notices between two writes are stored and sent as one event: its
latest (issue 38, finding 6: 5,000 notices made 5,000 rows and WebSocket frames)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User

from chat.models import RunEvent
from tests.chat.test_journal import Redis, journal_with, new_run, recording

pytestmark = pytest.mark.django_db(transaction=True)


def progress(call: str, done: int) -> dict[str, object]:
    return {"type": "tool.progress", "id": call, "name": "testing__storm", "progress": done,
            "total": 500, "message": f"{done} of 500"}  # fmt: skip


async def test_a_burst_of_a_calls_progress_is_stored_and_sent_as_its_latest(alice: User) -> None:
    run = await sync_to_async(new_run)(alice)
    redis = Redis()
    journal, task, database = await journal_with(redis)
    (recorder,) = recording(journal, run)

    await recorder({"type": "tool.call", "id": "c1", "name": "testing__storm", "arguments": {}})
    for done in range(1, 501):  # all between two ticks: no await lets the journal write
        await recorder(progress("c1" if done % 100 else "c2", done))
    await recorder({"type": "run.finished", "reason": "completed", "tokens": 1})
    await recorder.close()
    task.cancel()
    database.close()

    stored = [
        (event.type, event.data.get("id"), event.data.get("progress"))
        async for event in RunEvent.objects.filter(run=run).order_by("seq")
    ]
    kinds = [kind for kind, _, _ in stored]
    assert kinds.count("tool.progress") <= 10
    assert ("tool.progress", "c1", 499) in stored  # c1's latest
    assert ("tool.progress", "c2", 500) in stored  # another call's own, kept apart
    published = [e for message in redis.sent for e in message["events"]]
    assert len(published) == len(stored)
