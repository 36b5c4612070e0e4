"""Running a step's tools (agents/run/tool_step.py): within the tool-call budget, after
the user's approval where a tool needs it, every call answered in the history."""

from __future__ import annotations

import json

from agents import wording
from agents.model import ToolCallPart
from agents.run.deps import tool_context
from agents.run.tool_step import (
    close_unanswered_approvals,
    run_tools,
    take_approval_answers,
    unanswered_calls,
)
from agents.tools import Tool, ToolRegistry

from .step_run import ready_run

RAN: list[str] = []


async def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where to.
    """
    RAN.append(target)
    return f"deployed to {target}"


async def whoami() -> str:
    """Who calls."""
    context = tool_context()
    assert context is not None
    return f"{context.run_id}/{context.call_id}"


def approval_tools() -> ToolRegistry:
    return ToolRegistry(
        [
            Tool.from_schema(
                name="ops__deploy",
                description="Deploy.",
                parameters={"type": "object", "properties": {"target": {"type": "string"}}},
                function=deploy,
                server="ops",
                needs_approval=True,
            )
        ]
    )


def call(call_id: str, name: str, **arguments: object) -> ToolCallPart:
    return ToolCallPart(call_id, name, json.dumps(arguments))


def tool_answers(messages: list[dict[str, object]]) -> dict[object, object]:
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


async def test_each_call_is_shown_run_and_answered_in_the_history():
    step = ready_run()

    waits = await run_tools(step.run, [call("c1", "calculator", expression="6*7"),
                                       call("c2", "lookup", topic="owls")])  # fmt: skip

    assert waits is False
    assert [e["name"] for e in step.events.of_type("tool.call")] == ["calculator", "lookup"]
    results = {e["id"]: (e["ok"], e["content"]) for e in step.events.of_type("tool.result")}
    assert results == {"c1": (True, "42"), "c2": (True, "Notes about owls.")}
    assert tool_answers(step.state.messages) == {"c1": "42", "c2": "Notes about owls."}
    assert (step.state.round.tool_calls, step.state.total.tool_calls) == (2, 2)


async def test_calls_past_the_tool_call_budget_are_answered_not_run():
    step = ready_run(max_tool_calls_per_turn=1)

    await run_tools(step.run, [call("c1", "lookup", topic="owls"),
                               call("c2", "lookup", topic="bats")])  # fmt: skip

    assert tool_answers(step.state.messages) == {
        "c1": "Notes about owls.",
        "c2": "Not run: the tool-call budget of this run is used up.",
    }
    assert step.state.round.tool_calls == 1
    not_run = {e["id"]: e.get("not_run") for e in step.events.of_type("tool.result")}
    assert not_run == {"c1": None, "c2": "budget"}


async def test_a_tool_reads_the_run_and_call_it_serves():
    step = ready_run(tools=ToolRegistry([Tool.from_function(whoami)]))

    await run_tools(step.run, [call("c7", "whoami")])

    assert tool_answers(step.state.messages) == {"c7": f"{step.state.run_id}/c7"}
    assert tool_context() is None  # only during the call


async def test_a_call_that_needs_approval_waits_and_nothing_runs():
    RAN.clear()
    step = ready_run(tools=approval_tools())

    waits = await run_tools(step.run, [call("c1", "ops__deploy", target="prod")])

    assert waits is True
    assert RAN == []
    assert step.state.awaiting_approval == [
        {"id": "c1", "name": "ops__deploy", "server": "ops", "grant": None,
         "arguments": {"target": "prod"}}
    ]  # fmt: skip
    assert step.events.of_type("tool.result") == []
    assert step.state.round.tool_calls == 0


async def test_an_approved_call_runs_and_a_declined_one_tells_the_model_so():
    RAN.clear()
    step = ready_run(tools=approval_tools())
    calls = [call("c1", "ops__deploy", target="prod"), call("c2", "ops__deploy", target="test")]
    await run_tools(step.run, calls)
    step.state.approvals = {"c2": True}  # c1 unanswered: counts as declined

    await take_approval_answers(step.run)
    waits = await run_tools(step.run, calls, announce=False)

    given = [(e["id"], e["approved"]) for e in step.events.of_type("tool.approval_given")]
    assert given == [("c1", False), ("c2", True)]
    assert waits is False
    assert RAN == ["test"]
    assert tool_answers(step.state.messages) == {"c1": wording.DECLINED, "c2": "deployed to test"}
    assert step.state.approvals == {} and step.state.awaiting_approval == []


async def test_calls_left_waiting_for_approval_are_closed_as_not_answered():
    step = ready_run(tools=approval_tools())
    await run_tools(step.run, [call("c1", "ops__deploy", target="prod")])

    await close_unanswered_approvals(step.run)

    (result,) = step.events.of_type("tool.result")
    assert (result["id"], result["ok"], result["content"]) == ("c1", False, wording.NOT_ANSWERED)
    assert tool_answers(step.state.messages) == {"c1": wording.NOT_ANSWERED}
    assert step.state.awaiting_approval == []


def test_a_step_saved_before_its_tools_answered_gives_its_calls_back():
    wire = {"id": "c1", "type": "function",
            "function": {"name": "lookup", "arguments": '{"topic": "owls"}'}}  # fmt: skip
    asked = {"role": "assistant", "content": None, "tool_calls": [wire]}

    (again,) = unanswered_calls([{"role": "user", "content": "Owls?"}, asked])

    assert (again.id, again.name, again.shown_arguments) == ("c1", "lookup", {"topic": "owls"})
    answered = [asked, {"role": "tool", "tool_call_id": "c1", "content": "Notes."}]
    assert unanswered_calls(answered) == []
