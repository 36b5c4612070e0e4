"""The journal writes what runs produce, whatever happens to publishing: the
database is the source of truth that pages and SSE clients catch up from."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User

from chat.models import Message, Role, Run, RunEvent, RunStatus
from chat.services import conversation_create
from runs.journal import DatabaseThread, Journal
from runs.recorder import RunRecorder

pytestmark = pytest.mark.django_db(transaction=True)


class BrokenRedis:
    """Publishing to a Redis that is away."""

    def __init__(self) -> None:
        self.tries = 0

    async def __call__(self, message: str) -> None:
        self.tries += 1
        raise ConnectionError("Redis is away")


class Redis:
    """Publishing that works: the batches as a web process would receive them."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def __call__(self, message: str) -> None:
        self.sent.extend(json.loads(message)["runs"])


def new_run(owner: User) -> Run:
    conversation = conversation_create(owner=owner)
    return Run.objects.select_related("conversation").get(
        pk=Run.objects.create(conversation=conversation, status=RunStatus.RUNNING).pk
    )


async def stream(recorder: RunRecorder, words: list[str]) -> None:
    for word in words:
        await recorder({"type": "assistant.delta", "text": word})
        await asyncio.sleep(0.002)
    await recorder({"type": "assistant.message", "text": "".join(words), "final": True})
    await recorder({"type": "run.finished", "reason": "completed", "tokens": 7})


async def journal_with(publish: Any) -> tuple[Journal, asyncio.Task[None], DatabaseThread]:
    database = DatabaseThread()
    journal = Journal(database, publish, interval=0.01)
    return journal, asyncio.create_task(journal.run_forever()), database


def recording(journal: Journal, *runs: Run) -> list[RunRecorder]:
    """A recorder for each run, written by `journal`."""
    recorders = [RunRecorder(run, journal) for run in runs]
    for recorder in recorders:
        journal.add(recorder)
    return recorders


async def test_a_failed_publish_never_stops_the_writing(alice: User) -> None:
    run = await sync_to_async(new_run)(alice)
    redis = BrokenRedis()
    journal, task, database = await journal_with(redis)
    (recorder,) = recording(journal, run)
    words = [f"w{i} " for i in range(60)]

    await stream(recorder, words)
    await recorder.close(status=RunStatus.FINISHED, reason="completed")
    task.cancel()
    database.close()

    assert redis.tries >= 2  # it kept trying, and kept writing
    answer = await Message.objects.aget(run=run, role=Role.ASSISTANT)
    assert answer.content == "".join(words)
    saved = [e async for e in RunEvent.objects.filter(run=run).order_by("seq")]
    assert [e.seq for e in saved] == list(range(1, len(saved) + 1))
    streamed = "".join(e.data["text"] for e in saved if e.type == "assistant.delta")
    assert streamed == "".join(words)
    await run.arefresh_from_db()
    assert (run.status, run.reason, run.last_event_seq) == ("finished", "completed", len(saved))


async def test_runs_written_together_keep_their_own_order(alice: User, bob: User) -> None:
    first, second = await sync_to_async(new_run)(alice), await sync_to_async(new_run)(bob)
    redis = Redis()
    journal, task, database = await journal_with(redis)
    recorders = recording(journal, first, second)

    await asyncio.gather(
        stream(recorders[0], [f"a{i} " for i in range(40)]),
        stream(recorders[1], [f"b{i} " for i in range(40)]),
    )
    await asyncio.gather(*(recorder.close() for recorder in recorders))
    task.cancel()
    database.close()

    for run, letter in ((first, "a"), (second, "b")):
        answer = await Message.objects.aget(run=run, role=Role.ASSISTANT)
        assert answer.content == "".join(f"{letter}{i} " for i in range(40))
        published = [e for m in redis.sent if m["run_id"] == str(run.pk) for e in m["events"]]
        assert [e["seq"] for e in published] == list(range(1, len(published) + 1))
        assert len(published) == await RunEvent.objects.filter(run=run).acount()


async def test_a_run_claimed_again_elsewhere_is_no_longer_written_here(
    alice: User, bob: User
) -> None:
    mine, theirs = await sync_to_async(new_run)(alice), await sync_to_async(new_run)(bob)
    redis = Redis()
    journal, task, database = await journal_with(redis)
    recorders = recording(journal, mine, theirs)
    stopped: list[str] = []
    recorders[1].on_lost = lambda: stopped.append("theirs")
    await stream(recorders[0], ["a "])
    await stream(recorders[1], ["b "])
    await asyncio.sleep(0.2)
    # The second run's worker was thought lost, and another worker claimed the run.
    await Run.objects.filter(pk=theirs.pk).aupdate(lease=theirs.lease + 1)

    await recorders[1]({"type": "assistant.delta", "text": "twice"})
    await recorders[0]({"type": "assistant.delta", "text": "more"})
    await asyncio.gather(*(recorder.close() for recorder in recorders))
    task.cancel()
    database.close()

    assert stopped == ["theirs"]
    written = [e.data.get("text") async for e in RunEvent.objects.filter(run=theirs)]
    assert "twice" not in written  # nothing of it after the other claim
    assert "more" in [e.data.get("text") async for e in RunEvent.objects.filter(run=mine)]
    assert all(m["run_id"] != str(theirs.pk) or "twice" not in json.dumps(m) for m in redis.sent)


async def test_with_many_runs_streaming_a_tick_carries_several_words_of_each(
    alice: User,
) -> None:
    """Forty runs, each streaming a word every 5 ms: the journal writes them in fewer,
    fuller ticks than with one run alone, and every word still arrives once, in order."""
    runs = [await sync_to_async(new_run)(alice) for _ in range(40)]
    redis = Redis()
    journal, task, database = await journal_with(redis)
    recorders = recording(journal, *runs)
    words = [f"w{i} " for i in range(40)]

    async def fast(recorder: RunRecorder) -> None:
        for word in words:
            await recorder({"type": "assistant.delta", "text": word})
            await asyncio.sleep(0.005)

    await asyncio.gather(*(fast(recorder) for recorder in recorders))
    crowded = journal.pace()
    await asyncio.gather(*(recorder.close() for recorder in recorders))
    task.cancel()
    database.close()

    assert crowded > journal.interval  # 40 runs: it slowed down
    for run in runs:
        deltas = [e for m in redis.sent if m["run_id"] == str(run.pk) for e in m["events"]]
        assert "".join(e["text"] for e in deltas) == "".join(words)
        # A word every 5 ms for 0.2 s at one tick every 10 ms would be about 20 events.
        assert len(deltas) <= 12, len(deltas)
    alone = Journal(database, redis, interval=0.01)
    assert alone.pace() == 0.01  # one run streams at the interval itself


async def test_with_many_runs_a_stream_may_go_unread_until_just_before_the_next_tick(
    alice: User,
) -> None:
    """The run's model stream is left unread between ticks only when the journal is
    crowded (`read_pause`): never longer than until the next tick, whose words those
    would be; with a few runs every word is read as it comes."""
    runs = [await sync_to_async(new_run)(alice) for _ in range(40)]
    redis = Redis()
    journal, task, database = await journal_with(redis)
    few = recording(journal, *runs[:3])
    await few[0]({"type": "assistant.delta", "text": "alone "})
    await asyncio.sleep(journal.interval / 2)
    with_few = journal.read_pause()
    crowd = recording(journal, *runs[3:])
    for recorder in crowd:
        await recorder({"type": "assistant.delta", "text": "many "})
    pauses, crowded = [], journal.pace()
    for _ in range(20):
        await asyncio.sleep(0.005)
        pauses.append(journal.read_pause())
    await asyncio.gather(*(recorder.close() for recorder in few + crowd))
    task.cancel()
    database.close()

    assert with_few == 0.0
    assert max(pauses) > 0  # crowded: left unread for a while
    assert crowded > journal.interval
    assert max(pauses) <= crowded  # never past the next tick


async def test_an_answer_streamed_over_many_ticks_is_saved_whole_with_its_ending(
    alice: User,
) -> None:
    """While an answer streams, each tick writes only its grown text; the fields its
    end changes (final, usage, the reason) are written all the same."""
    run = await sync_to_async(new_run)(alice)
    journal, task, database = await journal_with(Redis())
    (recorder,) = recording(journal, run)
    words = [f"w{i} " for i in range(30)]

    await stream(recorder, words)  # a word every 2 ms, a tick every 10 ms
    await recorder.close(status=RunStatus.FINISHED, reason="completed")
    task.cancel()
    database.close()

    answer = await Message.objects.aget(run=run, role=Role.ASSISTANT)
    assert answer.content == "".join(words)
    assert answer.metadata["final"] is True
    assert answer.metadata["usage"]["tokens"] == 7
    assert answer.termination_reason == "completed"


async def test_a_write_given_back_keeps_the_rows_it_had_to_write_whole(alice: User) -> None:
    run = await sync_to_async(new_run)(alice)
    journal = Journal(DatabaseThread(), Redis(), interval=0.01)  # never ticks: we take
    (recorder,) = recording(journal, run)
    await recorder({"type": "assistant.delta", "text": "Hello"})
    first = recorder.take()
    await sync_to_async(_written)(recorder, first)
    await recorder({"type": "assistant.delta", "text": " there."})
    await recorder({"type": "assistant.message", "text": "Hello there.", "final": True})

    failed = recorder.take()  # the write of this batch failed: it is given back
    recorder.give_back(failed)
    again = recorder.take()
    journal.database.close()

    (update,) = [fields for pk, fields in again.updates if pk == first.new[0].pk]
    assert update["content"] == "Hello there."
    assert update["metadata"]["final"] is True  # not only the text


def _written(recorder: RunRecorder, batch: Any) -> None:
    from runs.journal_writes import write_all as _write_all

    (created,) = _write_all([batch])
    recorder.written(batch, created)


async def test_a_notice_while_an_answer_streams_leaves_one_answer_row(alice: User) -> None:
    run = await sync_to_async(new_run)(alice)
    journal, task, database = await journal_with(Redis())
    (recorder,) = recording(journal, run)

    await recorder({"type": "assistant.delta", "text": "Chapter 1. "})
    await recorder({"type": "system.notice", "severity": "warning", "metric": "time",
                    "text": "Approaching the time limit (8 of 10 s)."})  # fmt: skip
    await recorder({"type": "assistant.delta", "text": "Chapter 2. "})
    await recorder({"type": "system.notice", "severity": "stop", "metric": "time",
                    "text": "Stopped at the time limit."})  # fmt: skip
    ended = "Stopped at the time limit. So far: Chapter 1. Chapter 2. "
    await recorder({"type": "assistant.message", "final": True, "text": ended})
    await recorder.close(status=RunStatus.FINISHED, reason="timeout")
    task.cancel()
    database.close()

    rows = [(m.role, m.content) async for m in Message.objects.filter(run=run).order_by("seq")]
    assert rows == [
        ("assistant", ended),
        ("system", "Approaching the time limit (8 of 10 s)."),
        ("system", "Stopped at the time limit."),
    ]


async def test_a_step_that_never_ran_is_saved_with_why(alice: User) -> None:
    run = await sync_to_async(new_run)(alice)
    journal, task, database = await journal_with(Redis())
    (recorder,) = recording(journal, run)

    await recorder({"type": "tool.call", "id": "c1", "name": "fetch", "arguments": {}})
    cut = "Not run: the run stopped first."
    await recorder({"type": "tool.result", "id": "c1", "name": "fetch", "ok": False,
                    "content": cut, "not_run": "stopped"})  # fmt: skip
    await recorder.close(status=RunStatus.FINISHED, reason="cancelled")
    task.cancel()
    database.close()

    step = await Message.objects.aget(run=run, role=Role.TOOL)
    assert step.metadata["not_run"] == "stopped" and step.metadata["ok"] is False


async def test_the_limit_a_run_ended_at_is_kept_with_its_answer(alice: User) -> None:
    run = await sync_to_async(new_run)(alice)
    journal, task, database = await journal_with(Redis())
    (recorder,) = recording(journal, run)

    await recorder({"type": "assistant.message", "text": "Out of steps.", "final": True})
    await recorder({"type": "run.finished", "reason": "tool_budget_violation",
                    "metric": "iterations"})  # fmt: skip
    await recorder.close(status=RunStatus.FINISHED, reason="tool_budget_violation")
    task.cancel()
    database.close()

    answer = await Message.objects.aget(run=run, role=Role.ASSISTANT)
    assert answer.metadata["limit_metric"] == "iterations"
    assert answer.termination_reason == "tool_budget_violation"
