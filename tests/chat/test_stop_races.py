"""Stop always wins (SPEC 6a), whatever the run is doing when it arrives: each
interleaving of a Stop with an Approve, a Continue or a worker's claim, on the
database as the web side and the worker see it. And a wait on the user ends once it has
lasted `ORACLE_PAUSE_EXPIRY_SECONDS` (tests/e2e/test_stop_wins.py: the real stack)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from agents.cancel import CancelToken
from agents.state import AgentState, TerminationReason
from agents.state import RunStatus as EngineStatus
from chat.models import Message, Role, Run, RunEvent, RunStatus
from chat.services import conversation_create, run_approve, run_cancel, run_continue
from runs.errors import RunConflict
from runs.expiry import runs_expire_pauses
from runs.runner import claim
from runs.stops import stop_asked, stopped_before_going_on
from tests import processes

pytestmark = pytest.mark.django_db(transaction=True)
CALL = {"id": "c1", "name": "testing__mark", "server": "testing", "arguments": {"text": "x"}}


def paused_run(owner: User, *, approval: bool = True, paused_ago: float = 0) -> Run:
    """A run paused for the approval of one call (or at the iteration limit), as a worker
    leaves it, paused `paused_ago` seconds ago."""
    conversation = conversation_create(owner=owner)
    question = Message.objects.create(conversation=conversation, seq=1, role=Role.USER, content="Q")
    step = {"role": "assistant", "content": "", "tool_calls": [{
        "id": "c1", "type": "function",
        "function": {"name": "testing__mark", "arguments": '{"text": "x"}'}}]}  # fmt: skip
    state = AgentState(run_id="x", messages=[{"role": "user", "content": "Q"}, step])
    state.status = EngineStatus.PAUSED
    if approval:
        state.awaiting_approval = [CALL]
    else:
        state.paused_reason = TerminationReason.MAX_ITERATIONS
    run = Run.objects.create(
        conversation=conversation, status=RunStatus.PAUSED, user_message=question,
        state=json.loads(state.to_json()), last_event_seq=1,
    )  # fmt: skip
    Message.objects.create(conversation=conversation, run=run, seq=2, role=Role.TOOL,
                           metadata={"id": "c1", "name": "testing__mark"})  # fmt: skip
    conversation.last_message_seq = 2
    conversation.save()
    paused = RunEvent.objects.create(run=run, seq=1, type="run.paused", data={})
    RunEvent.objects.filter(pk=paused.pk).update(
        created_at=timezone.now() - timedelta(seconds=paused_ago)
    )
    return run


def fresh(run: Run) -> Run:
    return Run.objects.get(pk=run.pk)


def test_a_stop_read_paused_after_an_approve_queued_the_run_still_stops_it(alice: User) -> None:
    """The issue's race: the Stop read the run paused, the Approve queued it meanwhile."""
    run = paused_run(alice)
    read_paused = fresh(run)
    run_approve(run=fresh(run))

    stopped = run_cancel(run=read_paused)  # refused before: "cannot be stopped now"

    assert (stopped.status, stopped.pending_action) == ("queued", "approve")
    job = claim(str(run.pk))
    assert job is not None and stop_asked(str(run.pk))
    # The worker closes the approved call, not run, and ends the run cancelled.
    token = CancelToken()
    assert stopped_before_going_on(job.action, job.state, token) == "stop"
    assert not token.cancelled


def test_a_stop_after_the_worker_claimed_the_approved_run_reaches_it_before_its_tools(
    alice: User,
) -> None:
    run = paused_run(alice)
    run_approve(run=fresh(run))
    job = claim(str(run.pk))
    assert job is not None

    stopped = run_cancel(run=fresh(run))

    assert stopped.status == "running" and stopped.cancel_requested_at is not None
    assert stop_asked(str(run.pk))
    assert stopped_before_going_on(job.action, job.state, CancelToken()) == "stop"


def test_a_stop_of_a_queued_continue_ends_it_before_its_next_call(alice: User) -> None:
    run = paused_run(alice, approval=False)
    run_continue(run=fresh(run))

    stopped = run_cancel(run=fresh(run))

    assert (stopped.status, stopped.pending_action) == ("queued", "continue")
    job = claim(str(run.pk))
    assert job is not None and stop_asked(str(run.pk))
    token = CancelToken()
    assert stopped_before_going_on(job.action, job.state, token) == "continue"
    assert token.cancelled  # the engine ends it cancelled before it asks the model


def test_a_paused_run_stopped_twice_is_stopped_once(alice: User) -> None:
    run = paused_run(alice)

    first = run_cancel(run=fresh(run))
    again = run_cancel(run=run)  # read paused, before the first Stop

    assert (first.status, first.pending_action) == ("queued", "stop")
    assert (again.status, again.pending_action, again.queued_at) == (
        "queued", "stop", first.queued_at,
    )  # fmt: skip
    with pytest.raises(RunConflict):  # the Approve that comes after the Stop loses
        run_approve(run=run)


def test_an_approve_that_came_first_is_not_taken_back_by_a_later_run_of_it(
    alice: User,
) -> None:
    """A queued approval that was not stopped goes on as approved."""
    run = paused_run(alice)
    run_approve(run=fresh(run))
    job = claim(str(run.pk))

    assert job is not None and job.action == "approve"
    assert not stop_asked(str(run.pk))


def test_a_wait_on_the_user_past_the_expiry_is_queued_to_end(alice: User, settings) -> None:
    settings.ORACLE_PAUSE_EXPIRY_SECONDS = 3600
    old_approval = paused_run(alice, paused_ago=3601)
    old_limit = paused_run(alice, approval=False, paused_ago=7200)
    recent = paused_run(alice, paused_ago=3500)

    expired = runs_expire_pauses()

    assert {run.pk for run in expired} == {old_approval.pk, old_limit.pk}
    assert (fresh(recent).status, fresh(old_limit).pending_action) == ("paused", "expire")
    job = claim(str(old_approval.pk))
    assert job is not None and job.action == "expire"
    assert list(job.tool_steps) == ["c1"]  # its waiting step is the one it closes
    assert runs_expire_pauses() == []  # once only


def test_a_stop_or_an_approve_after_the_expiry_changes_nothing(alice: User, settings) -> None:
    settings.ORACLE_PAUSE_EXPIRY_SECONDS = 60
    run = paused_run(alice, paused_ago=61)
    runs_expire_pauses()

    stopped = run_cancel(run=fresh(run))

    assert (stopped.status, stopped.pending_action) == ("queued", "expire")
    assert stopped.cancel_requested_at is None
    with pytest.raises(RunConflict):
        run_approve(run=fresh(run))


def test_with_no_expiry_a_pause_waits_for_ever(alice: User, settings) -> None:
    settings.ORACLE_PAUSE_EXPIRY_SECONDS = 0
    run = paused_run(alice, paused_ago=365 * 86400)

    assert runs_expire_pauses() == []
    assert fresh(run).status == "paused"


@pytest.mark.parametrize("value", ["-1", "a day", "nan", "inf"])
def test_the_expiry_setting_refuses_what_is_no_number_of_seconds(value: str) -> None:
    result = processes.manage("check", env=processes.base_env(ORACLE_PAUSE_EXPIRY_SECONDS=value))

    assert result.returncode == 2
    assert "ORACLE_PAUSE_EXPIRY_SECONDS must be a number of seconds, 0 or more" in result.stderr
    assert "Traceback" not in result.stderr
