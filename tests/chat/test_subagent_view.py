"""A subagent in the chat: a panel inside its delegate step, live and after a reload."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.models import Conversation, Message, Role, Run, RunStatus
from chat.run_view import RunView
from chat.services import conversation_create

CALL = {"type": "tool.call", "seq": 2, "id": "c1", "name": "delegate",
        "arguments": {"agent_type": "researcher", "task": "Find owls."}}  # fmt: skip
STARTED = {"type": "subagent.started", "seq": 3, "call_id": "c1", "agent_type": "researcher",
           "task": "Find owls.", "limits": {"max_iterations": 3, "timeout_seconds": 60,
           "token_budget": 5_000, "max_cost_usd": 0.5, "max_tool_calls": 4}}  # fmt: skip
STEP = {"type": "subagent.step", "seq": 4, "call_id": "c1",
        "event": {"type": "tool.call", "name": "search_documents",
                  "arguments": {"query": "owls"}}}  # fmt: skip
PROGRESS = {"type": "subagent.progress", "seq": 5, "call_id": "c1",
            "counters": {"iterations": 2, "tool_calls": 1, "tokens": 1_200, "cost_usd": 0,
                         "elapsed_ms": 4_000}}  # fmt: skip
FINISHED = {"type": "subagent.finished", "seq": 6, "call_id": "c1", "agent_type": "researcher",
            "reason": "max_iterations", "counters": {"iterations": 3, "tool_calls": 1,
            "tokens": 1_500, "cost_usd": 0, "elapsed_ms": 5_000}}  # fmt: skip


def feed(view: RunView, *events: dict[str, Any]) -> list[str]:
    return [view.render(event) for event in events]


def test_the_panel_shows_the_subagents_type_task_steps_and_its_own_gauges() -> None:
    view = RunView("r1")
    call, started, step, progress = feed(view, CALL, STARTED, STEP, PROGRESS)

    assert 'id="run-r1-tc1-sub" hidden' in call  # a place for it in the delegate step
    assert "to a researcher" in call
    assert 'id="run-r1-tc1-sub"' in started and "Find owls." in started
    assert "working…" in started
    assert "search_documents" in step and "owls" in step
    assert "2 / 3" in progress  # iterations against its own limit, not the parent's
    assert "1,200 / 5,000" in progress


def test_a_finished_subagent_shows_why_it_ended_and_stays_in_its_step() -> None:
    view = RunView("r1")
    feed(view, CALL, STARTED, STEP, PROGRESS)
    (finished,) = feed(view, FINISHED)
    (result,) = feed(
        view,
        {"type": "tool.result", "seq": 7, "id": "c1", "name": "delegate", "ok": True,
         "content": "The researcher stopped before finishing."},
    )  # fmt: skip

    assert "Iteration limit" in finished and "3 / 3" in finished
    assert "Iteration limit" in result and "search_documents" in result  # redrawn whole


def test_a_subagent_its_run_outlived_is_discarded_with_nothing_of_it_shown() -> None:
    view = RunView("r1")
    feed(view, CALL, STARTED, STEP, PROGRESS)
    (result,) = feed(
        view,
        {"type": "tool.result", "seq": 7, "id": "c1", "name": "delegate", "ok": False,
         "content": "Not run: the run stopped first."},
    )  # fmt: skip

    assert "Discarded: the run stopped before it finished" in result
    assert "search_documents" not in result and "1,200" not in result


SUB_RUNNING = {"agent_type": "researcher", "task": "Find owls.", "limits": STARTED["limits"],
               "counters": {"iterations": 2, "tokens": 1_200}, "status": "running",
               "steps": [STEP["event"]]}  # fmt: skip


def saved_step(conversation: Conversation, run_status: str, sub: dict[str, Any]) -> None:
    question = Message.objects.create(conversation=conversation, seq=1, role=Role.USER,
                                      content="Owls?")  # fmt: skip
    reason = "cancelled" if run_status == RunStatus.FINISHED else ""
    run = Run.objects.create(conversation=conversation, status=run_status, user_message=question,
                             reason=reason)  # fmt: skip
    Message.objects.create(conversation=conversation, run=run, seq=2, role=Role.TOOL,
                           content="Owls hunt by sound.",
                           metadata={"id": "c1", "name": "delegate", "status": "done", "ok": True,
                                     "arguments": CALL["arguments"], "subagent": sub})  # fmt: skip


@pytest.mark.django_db
def test_a_reload_shows_a_finished_subagent_with_its_steps_and_reason(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    done = {**SUB_RUNNING, "status": "finished", "reason": "completed"}
    saved_step(conversation, RunStatus.FINISHED, done)
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    assert "to a researcher" in page and "Find owls." in page
    assert "search_documents" in page and "2 / 3" in page
    assert "Discarded" not in page


@pytest.mark.django_db
def test_a_reload_shows_a_subagent_its_ended_run_left_unfinished_as_discarded(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    saved_step(conversation, RunStatus.FINISHED, SUB_RUNNING)  # the worker died with it
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    assert "Discarded: the run stopped before it finished" in page
    assert "search_documents" not in page
