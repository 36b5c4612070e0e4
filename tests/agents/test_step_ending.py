"""Ending or pausing a run (agents/run/ending.py): the final message, the System notice
and the closing event, a pause at a limit or for the user's approval, and the notices
the tree left to send."""

from __future__ import annotations

from agents.events import APPROVAL
from agents.model import ModelProblem
from agents.run.ending import failure_class, finish, flush_outbox, pause, pause_for_approval
from agents.state import (
    FailureClass,
    LimitHit,
    Metric,
    Notice,
    ProviderFailure,
    RunStatus,
    TerminationReason,
)

from .step_run import ready_run


async def test_an_answered_run_ends_with_its_text_and_no_notice():
    step = ready_run()
    step.run.unemitted_text = "It is 42."

    await finish(step.run, TerminationReason.COMPLETED)

    assert step.events.types() == ["assistant.message", "run.finished"]
    assert step.state.status is RunStatus.FINISHED
    assert step.state.final_text == "It is 42."
    finished = step.events.of_type("run.finished")[0]
    assert (finished["reason"], finished["final_text"]) == ("completed", "It is 42.")


async def test_a_run_stopped_at_a_limit_keeps_its_text_and_says_why():
    step = ready_run()
    step.run.unemitted_text = "Owls hunt at night."
    step.state.limit_hit = LimitHit(Metric.ITERATIONS, 15, 15)

    await finish(step.run, TerminationReason.MAX_ITERATIONS)

    assert step.events.types() == ["assistant.message", "system.notice", "run.finished"]
    assert step.state.final_text.startswith("Stopped: reached the iteration limit (15 of 15).")
    assert "Owls hunt at night." in step.state.final_text
    notice = step.events.of_type("system.notice")[0]
    assert (notice["reason"], notice["value"], notice["limit"]) == ("max_iterations", 15, 15)
    assert step.state.failure_class is FailureClass.DETERMINISTIC


def test_a_passing_provider_failure_may_be_tried_again_and_the_users_stop_is_no_failure():
    step = ready_run()
    step.state.provider_failure = ProviderFailure(ModelProblem.RATE_LIMITED, 429, "m", "slow")
    assert failure_class(TerminationReason.PROVIDER_ERROR, step.state) is (
        FailureClass.TRANSIENT_INFRA
    )
    step.state.provider_failure = ProviderFailure(ModelProblem.AUTH, 401, "m", "bad key")
    assert failure_class(TerminationReason.PROVIDER_ERROR, step.state) is (
        FailureClass.DETERMINISTIC
    )
    assert failure_class(TerminationReason.CANCELLED, step.state) is None
    assert failure_class(TerminationReason.INTERRUPTED, step.state) is (
        FailureClass.TRANSIENT_INFRA
    )


async def test_a_pause_at_a_limit_shows_the_text_so_far_and_the_limit():
    step = ready_run()
    step.run.unemitted_text = "So far: owls."
    step.state.limit_hit = LimitHit(Metric.TOOL_CALLS, 5, 5)

    await pause(step.run, TerminationReason.TOOL_BUDGET)

    assert step.events.types() == ["assistant.message", "system.notice", "run.paused"]
    message = step.events.of_type("assistant.message")[0]
    assert (message["text"], message["final"]) == ("So far: owls.", False)
    notice = step.events.of_type("system.notice")[0]
    assert (notice["metric"], notice["reason"]) == (Metric.TOOL_CALLS, "tool_budget")
    assert step.events.of_type("run.paused")[0]["reason"] == "tool_budget"


async def test_a_pause_for_approval_asks_for_each_call():
    step = ready_run()
    step.state.awaiting_approval = [
        {"id": "c1", "name": "ops__deploy", "server": "ops", "arguments": {"target": "prod"}}
    ]

    await pause_for_approval(step.run)

    assert step.state.status is RunStatus.PAUSED
    assert step.events.types() == ["tool.approval_requested", "system.notice", "run.paused"]
    asked = step.events.of_type("tool.approval_requested")[0]
    assert (asked["id"], asked["server"], asked["arguments"]) == ("c1", "ops", {"target": "prod"})
    assert step.events.of_type("system.notice")[0]["reason"] == APPROVAL
    assert step.events.of_type("run.paused")[0]["reason"] == APPROVAL


async def test_the_trees_events_and_notices_are_sent_once_in_order():
    step = ready_run()
    step.state.pending_events.append({"type": "budget.extended", "iterations": 30})
    step.state.pending_notices.append(Notice("warning", "12 of 15 iterations."))

    await flush_outbox(step.run)
    await flush_outbox(step.run)

    assert step.events.types() == ["budget.extended", "system.notice"]
    assert step.events.of_type("budget.extended")[0]["iterations"] == 30
    assert step.events.of_type("system.notice")[0]["text"] == "12 of 15 iterations."
    first, second = (event["seq"] for event in step.events.events)
    assert second == first + 1
