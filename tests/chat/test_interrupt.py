"""A run that cannot go on (its worker died, or Oracle failed inside) ends `interrupted`:
what it wrote is kept and explained, and Resume picks it up again."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from agents.offline_model import OfflineModel
from agents.state import AgentState
from chat.models import Message, Role, Run, RunEvent, RunStatus
from chat.services import conversation_create, run_cancel, run_continue
from runs.interruptions import FAILED_NOTICE, run_interrupt, runs_mark_interrupted
from runs.runner import claim

pytestmark = pytest.mark.django_db(transaction=True)
QUESTION = {"role": "user", "content": "Q"}


def running_run(owner: User, *, heartbeat_age: float) -> Run:
    conversation = conversation_create(owner=owner)
    question = Message.objects.create(conversation=conversation, seq=1, role=Role.USER, content="Q")
    run = Run.objects.create(
        conversation=conversation, status=RunStatus.RUNNING, user_message=question,
        heartbeat_at=timezone.now() - timedelta(seconds=heartbeat_age), last_event_seq=4,
        state=json.loads(AgentState(run_id="x", messages=[QUESTION]).to_json()),
    )  # fmt: skip
    Message.objects.create(conversation=conversation, run=run, seq=2, role=Role.ASSISTANT,
                           content="Half an answer", metadata={"final": False})  # fmt: skip
    conversation.last_message_seq = 2
    conversation.save()
    return run


def test_a_failure_inside_keeps_the_partial_answer_and_offers_resume(alice: User) -> None:
    run = running_run(alice, heartbeat_age=0)

    assert run_interrupt(run_id=run.pk, notice=FAILED_NOTICE) is not None

    run.refresh_from_db()
    assert (run.status, run.reason, run.failure_class) == ("finished", "interrupted",
                                                            "transient_infra")  # fmt: skip
    answer = run.messages.get(role=Role.ASSISTANT)
    assert answer.content.startswith("Stopped: the run was interrupted.")
    assert "Half an answer" in answer.content
    assert answer.termination_reason == "interrupted"
    assert run.messages.get(role=Role.SYSTEM).content == FAILED_NOTICE
    events = list(RunEvent.objects.filter(run=run).values_list("seq", "type"))
    assert events == [(5, "assistant.message"), (6, "system.notice"), (7, "run.finished")]

    resumed = run_continue(run=run)
    assert (resumed.status, resumed.pending_action) == ("queued", "resume")


def test_only_runs_without_a_fresh_heartbeat_are_swept(alice: User, settings) -> None:
    settings.ORACLE_RUN_HEARTBEAT_TIMEOUT = 30
    lost = running_run(alice, heartbeat_age=31)
    alive = running_run(alice, heartbeat_age=5)

    assert [run.pk for run in runs_mark_interrupted()] == [lost.pk]
    alive.refresh_from_db()
    assert alive.status == RunStatus.RUNNING
    assert runs_mark_interrupted() == []  # once only
    notice = lost.messages.get(role=Role.SYSTEM)  # says what was counted, against what
    assert notice.content.startswith(
        "The worker running this answer was lost: no word from it for 31 of 30 seconds. "
        "What it produced is kept above, and Oracle is picking the run up where it stopped "
        "(automatic retry 1 of 2)."
    )
    assert (notice.metadata["metric"], notice.metadata["limit"]) == ("silence", 30)
    event = RunEvent.objects.get(run=lost, type="system.notice").data
    assert (event["metric"], event["value"], event["limit"]) == ("silence", 31, 30)


def test_stopping_a_queued_run_ends_it_with_its_events_and_no_failure_class(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    run = Run.objects.create(conversation=conversation, status=RunStatus.QUEUED,
                             pending_action="start")  # fmt: skip

    run = run_cancel(run=run)

    assert (run.status, run.reason, run.failure_class) == ("finished", "cancelled", "")
    events = [e.data for e in RunEvent.objects.filter(run=run).order_by("seq")]
    assert [(e["seq"], e["type"]) for e in events] == [(1, "system.notice"), (2, "run.finished")]
    assert events[1]["reason"] == "cancelled" and events[1]["failure_class"] is None
    assert run.messages.get().content == "Stopped before the Oracle started working."


def test_the_cut_off_call_is_counted_from_what_it_streamed(alice: User) -> None:
    run = running_run(alice, heartbeat_age=0)
    Run.objects.filter(pk=run.pk).update(tokens=100)

    run_interrupt(run_id=run.pk, notice=FAILED_NOTICE)

    run.refresh_from_db()
    assert run.tokens > 100  # "Half an answer" was paid for, though no usage came
    # The prompt of the last checkpoint and the streamed text, not the explanation added.
    prompt = OfflineModel().count_tokens([QUESTION])
    assert run.tokens == 100 + prompt + (len("Half an answer") + 3) // 4
    finished = RunEvent.objects.get(run=run, type="run.finished")
    assert finished.data["tokens"] == run.tokens


def test_a_finished_tool_step_is_not_quoted_again(alice: User) -> None:
    run = running_run(alice, heartbeat_age=0)
    step = run.messages.get(role=Role.ASSISTANT)
    step.content = "Let me calculate that."
    step.metadata = {"final": False, "tool_calls": [{"id": "c1", "name": "calculator"}]}
    step.save()
    Message.objects.create(conversation=run.conversation, run=run, seq=3, role=Role.TOOL,
                           content="6", metadata={"id": "c1", "status": "done"})  # fmt: skip
    run.conversation.last_message_seq = 3
    run.conversation.save()
    Run.objects.filter(pk=run.pk).update(tokens=100)

    run_interrupt(run_id=run.pk, notice=FAILED_NOTICE)

    answers = list(run.messages.filter(role=Role.ASSISTANT).order_by("seq"))
    assert answers[0].content == "Let me calculate that."  # left as it was
    assert "Let me calculate that." not in answers[-1].content
    assert answers[-1].termination_reason == "interrupted"
    run.refresh_from_db()
    assert run.tokens == 100  # no call was streaming: nothing to add


def test_an_earlier_rounds_answer_is_left_alone(alice: User) -> None:
    run = running_run(alice, heartbeat_age=0)
    earlier = run.messages.get(role=Role.ASSISTANT)
    earlier.content = "The answer of the first round."
    earlier.metadata = {"final": True, "tool_calls": []}
    earlier.termination_reason = "cancelled"
    earlier.save()

    run_interrupt(run_id=run.pk, notice=FAILED_NOTICE)

    earlier.refresh_from_db()
    assert earlier.content == "The answer of the first round."
    assert earlier.termination_reason == "cancelled"
    latest = run.messages.filter(role=Role.ASSISTANT).order_by("-seq").first()
    assert latest is not None and latest.pk != earlier.pk
    assert "first round" not in latest.content


def test_a_lost_workers_run_is_resumed_by_itself_twice_then_waits_for_the_user(
    alice: User, settings
) -> None:
    settings.ORACLE_RUN_HEARTBEAT_TIMEOUT = 30
    run = running_run(alice, heartbeat_age=31)
    for retry in (1, 2):
        (swept,) = runs_mark_interrupted()
        swept.refresh_from_db()
        assert (swept.status, swept.pending_action, swept.auto_resumes) == (
            "queued",
            "resume",
            retry,
        )
        # A worker claims it, and is lost again.
        Run.objects.filter(pk=run.pk).update(
            status=RunStatus.RUNNING, heartbeat_at=timezone.now() - timedelta(seconds=31)
        )

    (swept,) = runs_mark_interrupted()

    swept.refresh_from_db()
    assert (swept.status, swept.reason, swept.auto_resumes) == ("finished", "interrupted", 2)
    latest = swept.messages.filter(role=Role.SYSTEM).order_by("-seq").first()
    assert latest is not None and "press Resume" in latest.content


def test_a_run_lost_before_anything_was_saved_starts_again_from_its_question(
    alice: User, settings
) -> None:
    """Its worker died (or could not write) as it began: no checkpoint to resume from."""
    settings.ORACLE_RUN_HEARTBEAT_TIMEOUT = 30
    conversation = conversation_create(owner=alice)
    question = Message.objects.create(conversation=conversation, seq=1, role=Role.USER,
                                      content="What is 2+2?")  # fmt: skip
    conversation.last_message_seq = 1
    conversation.save()
    Run.objects.create(
        conversation=conversation, status=RunStatus.RUNNING, pending_action="start",
        user_message=question, heartbeat_at=timezone.now() - timedelta(seconds=31),
    )  # fmt: skip
    (swept,) = runs_mark_interrupted()
    assert swept.pending_action == "resume"

    job = claim(str(swept.pk))

    assert job is not None
    assert (job.action, job.question, job.history, job.state) == ("start", "What is 2+2?", [], None)


def test_a_failure_inside_oracle_is_not_retried_by_itself(alice: User) -> None:
    run = running_run(alice, heartbeat_age=0)

    run_interrupt(run_id=run.pk, notice=FAILED_NOTICE)

    run.refresh_from_db()
    assert (run.status, run.auto_resumes) == ("finished", 0)
