"""A tool call that needs the user's approval pauses the run until Approve or Deny."""

from __future__ import annotations

import json

from agents.clock import Clock
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import (
    RunDeps,
    answer_approval,
    continue_run,
    resume_run,
    start_run,
    stop_paused_run,
)
from agents.state import AgentState, RunStatus, TerminationReason
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tools import Tool, ToolRegistry
from agents.tree import DefaultDecisionTree

RAN: list[str] = []


async def deploy(**arguments: object) -> str:
    RAN.append(json.dumps(arguments, sort_keys=True))
    return "deployed"


def registry() -> ToolRegistry:
    schema = {"type": "object", "properties": {"target": {"type": "string"}}}
    return ToolRegistry(
        [
            Tool.from_schema(
                name="ops__deploy",
                description="Deploy.",
                parameters=schema,
                function=deploy,
                server="ops",
                needs_approval=True,
            ),
            Tool.from_schema(
                name="ops__status", description="Status.", parameters=schema, function=deploy
            ),
        ]
    )


def deps(script: list[Reply], clock: Clock | None = None) -> RunDeps:
    clock = clock or Clock()
    tree = DefaultDecisionTree(AgentConfig.from_raw({}), None)
    return RunDeps(
        model=ScriptedModel(script, clock=clock), tree=tree, tools=registry(), clock=clock
    )


SCRIPT = [
    Reply(calls=[Call("ops__deploy", {"target": "prod"})]),
    Reply(text="Done."),
]


async def paused_run() -> tuple[AgentState, RunDeps, EventCollector]:
    RAN.clear()
    run_deps = deps(list(SCRIPT))
    events = EventCollector()
    result = await start_run("Deploy to prod", run_deps, on_event=events)
    # Saved and loaded again, as a worker that holds nothing while it waits.
    return AgentState.from_json(result.state.to_json()), run_deps, events


async def test_a_call_that_needs_approval_pauses_the_run_before_it_acts():
    state, _, events = await paused_run()

    assert state.status is RunStatus.PAUSED
    assert RAN == []
    (asked,) = events.of_type("tool.approval_requested")
    assert asked["name"] == "ops__deploy"
    assert asked["server"] == "ops"
    assert asked["arguments"] == {"target": "prod"}
    (notice,) = events.of_type("system.notice")
    assert "ops__deploy (MCP server ops)" in notice["text"]
    assert '"target": "prod"' in notice["text"]
    assert events.types()[-1] == "run.paused"
    assert events.of_type("run.paused")[0]["reason"] == "approval"
    assert state.total.tool_calls == 0  # nothing ran yet


async def test_approve_runs_the_call_and_the_run_goes_on():
    state, run_deps, _ = await paused_run()
    state.approvals[state.awaiting_approval[0]["id"]] = True
    events = EventCollector()

    result = await answer_approval(state, run_deps, on_event=events)

    assert RAN == ['{"target": "prod"}']
    (given,) = events.of_type("tool.approval_given")
    assert given["approved"] is True
    (resumed,) = events.of_type("run.resumed")
    assert resumed["reason"] == "approval"  # no limit's: the limit log leaves it out
    assert result.reason is TerminationReason.COMPLETED
    assert result.final_text == "Done."
    assert result.state.total.tool_calls == 1
    (tool_result,) = events.of_type("tool.result")
    assert tool_result["ok"] is True


async def test_deny_gives_the_model_a_tool_error_and_the_run_goes_on():
    state, run_deps, _ = await paused_run()
    state.approvals[state.awaiting_approval[0]["id"]] = False
    events = EventCollector()

    result = await answer_approval(state, run_deps, on_event=events)

    assert RAN == []
    assert events.of_type("tool.approval_given")[0]["approved"] is False
    (tool_result,) = events.of_type("tool.result")
    assert tool_result["ok"] is False
    assert "declined" in tool_result["content"]
    assert tool_result["not_run"] == "declined"
    assert result.reason is TerminationReason.COMPLETED
    told = [m for m in result.state.messages if m.get("role") == "tool"]
    assert told[-1]["content"] == "Error: The user declined this call."


async def test_stop_while_waiting_ends_the_run_as_cancelled_without_running_the_call():
    state, run_deps, _ = await paused_run()
    events = EventCollector()

    result = await stop_paused_run(state, run_deps, on_event=events)

    assert RAN == []
    assert result.reason is TerminationReason.CANCELLED
    assert events.types()[-1] == "run.finished"
    # Its step is closed, and the history a Continue sends answers every call.
    (closed,) = events.of_type("tool.result")
    assert closed["ok"] is False
    assert closed["content"] == "Not run: the run was stopped before you answered."
    assert closed["not_run"] == "unanswered"
    assert result.state.awaiting_approval == []

    continued = await continue_run(result.state, run_deps, on_event=EventCollector())

    assert continued.reason is TerminationReason.COMPLETED
    asked = run_deps.model.calls[-1].messages  # type: ignore[attr-defined]
    (call_id,) = [c["id"] for m in asked for c in m.get("tool_calls") or []]
    assert [m["content"] for m in asked if m.get("tool_call_id") == call_id] == [
        "Not run: the run was stopped before you answered."
    ]


async def test_time_spent_waiting_is_not_run_time():
    clock = Clock()
    run_deps = deps(list(SCRIPT), clock)
    result = await start_run("Deploy", run_deps)
    state = AgentState.from_json(result.state.to_json())
    before = state.total.elapsed_s
    clock.advance(3600)  # an hour before the user answers
    state.approvals[state.awaiting_approval[0]["id"]] = True

    result = await answer_approval(state, run_deps)

    assert result.reason is TerminationReason.COMPLETED
    assert result.state.total.elapsed_s - before < 60


async def test_tools_that_need_no_approval_run_at_once():
    RAN.clear()
    run_deps = deps([Reply(calls=[Call("ops__status", {"target": "prod"})]), Reply(text="Ok.")])

    result = await start_run("Status?", run_deps)

    assert result.reason is TerminationReason.COMPLETED
    assert RAN == ['{"target": "prod"}']


async def test_a_worker_lost_as_it_took_up_the_answer_resumes_with_it():
    """The worker that took the Approve died before its first checkpoint: the state saved
    is the paused one, with the answer the service wrote into it. Resumed, the call runs
    once, without asking again."""
    state, run_deps, _ = await paused_run()
    (waiting,) = state.awaiting_approval
    state.approvals[waiting["id"]] = True

    events = EventCollector()
    result = await resume_run(state, run_deps, on_event=events)

    assert result.state.termination_reason is TerminationReason.COMPLETED
    assert RAN == ['{"target": "prod"}']
    assert not events.of_type("tool.approval_requested")
    assert [e["approved"] for e in events.of_type("tool.approval_given")] == [True]
    assert result.state.awaiting_approval == []
