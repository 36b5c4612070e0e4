"""A call that acted never runs twice: each call's result is kept as it ends, and a run
resumed after its worker was lost mid-step runs only the calls that had not finished
(one cut mid-way runs again only when its tool is idempotent; otherwise the model is
told it was interrupted). Approvals given hold for the calls not yet run."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace

from agents.config import AgentConfig, OperatorLimits
from agents.events import EventCollector
from agents.loop import RunDeps, ToolContext, answer_approval, resume_run, start_run
from agents.mcp import McpHub
from agents.mcp_config import parse_mcp_config
from agents.run.tool_step import INTERRUPTED_CALL
from agents.state import AgentState, RunStatus
from agents.subagents import AgentType, Delegation
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tools import Tool, ToolRegistry
from agents.tree import DefaultDecisionTree
from tests.mcp.served import mcp_testing_server


class Desk:
    """What the tools did, and the switch that makes the slow one hang (the worker is
    lost while it waits)."""

    def __init__(self) -> None:
        self.lines: list[str] = []  # the marker file: a line for each write
        self.slow_calls = 0
        self.looked_up: list[str] = []
        self.hang = True
        self.slow_started = asyncio.Event()

    def tools(self, *, slow_idempotent: bool = False) -> ToolRegistry:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}

        async def write(text: str = "") -> str:
            self.lines.append(text)
            return f"wrote {text}"

        async def slow(text: str = "") -> str:
            self.slow_calls += 1
            self.slow_started.set()
            if self.hang:
                await asyncio.Event().wait()  # until the worker is lost
            return "waited"

        async def look(text: str = "") -> str:
            self.looked_up.append(text)
            return f"notes on {text}"

        def tool(name: str, function: object) -> Tool:
            return Tool.from_schema(
                name=name, description=name, parameters=schema, function=function,  # type: ignore[arg-type]
                server="ops", needs_approval=True,
            )  # fmt: skip

        return ToolRegistry(
            [
                tool("ops__write", write),
                replace(tool("ops__slow", slow), idempotent=slow_idempotent),
                tool("ops__look", look),
            ]
        )


STEP = Reply(
    calls=[
        Call("ops__write", {"text": "one"}),
        Call("ops__slow", {}),
        Call("ops__look", {"text": "tides"}),
    ]
)


def deps(model: ScriptedModel, desk: Desk, *, slow_idempotent: bool = False) -> RunDeps:
    # One call at a time: the third has not started when the second is cut.
    tree = DefaultDecisionTree(AgentConfig(max_parallel_tools=1))
    return RunDeps(model=model, tree=tree, tools=desk.tools(slow_idempotent=slow_idempotent))


async def lost_during_the_second_call(desk: Desk, *, slow_idempotent: bool) -> AgentState:
    """Start a run whose step makes the three calls, approve them all, and lose the
    worker while the second runs: the state as the last checkpoint saved it."""
    saved: list[str] = []

    async def keep(state: AgentState) -> None:
        saved.append(state.to_json())

    paused = await start_run(
        "Write, wait, look", deps(ScriptedModel([STEP]), desk), on_checkpoint=keep
    )
    assert [call["name"] for call in paused.state.awaiting_approval] == [
        "ops__write", "ops__slow", "ops__look",
    ]  # fmt: skip
    state = AgentState.from_json(paused.state.to_json())  # as the approval saved it
    for call in state.awaiting_approval:
        state.approvals[call["id"]] = True
    saved.append(state.to_json())  # the user's Approve is saved with the paused state
    worker = asyncio.create_task(
        answer_approval(
            state,
            deps(ScriptedModel([]), desk, slow_idempotent=slow_idempotent),
            on_checkpoint=keep,
        )
    )
    await asyncio.wait_for(desk.slow_started.wait(), 5)
    lost = AgentState.from_json(saved[-1])  # what the database holds when it dies
    worker.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await worker
    assert desk.lines == ["one"] and desk.looked_up == []
    return lost


async def test_a_resumed_step_keeps_what_ended_and_tells_the_model_of_the_cut_call() -> None:
    desk = Desk()
    lost = await lost_during_the_second_call(desk, slow_idempotent=False)
    desk.hang = False
    model = ScriptedModel([Reply(text="Wrote one; the wait was cut; tides noted.")])
    events = EventCollector()

    result = await resume_run(lost, deps(model, desk), on_event=events)

    assert result.final_text == "Wrote one; the wait was cut; tides noted."
    assert desk.lines == ["one"]  # the write that ended is not made again
    assert desk.slow_calls == 1  # the cut call may have acted: not run again
    assert desk.looked_up == ["tides"]  # the call that never started runs, approved
    told = [m for m in model.calls[0].messages if m["role"] == "tool"]
    assert [m["content"] for m in told] == ["wrote one", INTERRUPTED_CALL, "notes on tides"]
    assert events.of_type("tool.approval_requested") == []  # not asked again
    results = {e["name"]: e for e in events.of_type("tool.result")}
    assert sorted(results) == ["ops__look", "ops__slow"]  # the write's was given before
    assert (results["ops__slow"]["ok"], results["ops__slow"]["content"]) == (
        False, INTERRUPTED_CALL,
    )  # fmt: skip
    assert result.state.total.tool_calls == 3  # each call counted once
    assert result.state.status is RunStatus.FINISHED


async def test_a_cut_call_of_an_idempotent_tool_runs_again() -> None:
    desk = Desk()
    lost = await lost_during_the_second_call(desk, slow_idempotent=True)
    desk.hang = False
    model = ScriptedModel([Reply(text="All three done.")])

    result = await resume_run(lost, deps(model, desk, slow_idempotent=True))

    assert result.final_text == "All three done."
    assert desk.lines == ["one"]
    assert desk.slow_calls == 2  # cut once, run again to its end
    told = [m["content"] for m in model.calls[0].messages if m["role"] == "tool"]
    assert told == ["wrote one", "waited", "notes on tides"]


async def test_an_mcp_tool_is_idempotent_when_its_server_says_it_is_read_only_or_idempotent() -> (
    None
):
    config = parse_mcp_config({"mcpServers": {"testing": mcp_testing_server()}})
    hub = McpHub(config.servers, startup_timeout=30)
    await hub.start()
    try:
        tools = {offered.tool: hub.tool(offered) for offered in hub.tools()}
    finally:
        await hub.close()

    assert tools["sleep"].idempotent  # annotated read-only: a cut call runs again
    assert not tools["append"].idempotent  # no hints: a cut call is told, not run again
    assert not tools["die"].idempotent  # destructive


def test_an_operators_tool_function_says_it_is_idempotent_by_an_attribute() -> None:
    from agents.builtin_tools import calculator
    from agents.testing.tools import wait

    assert Tool.from_function(wait).idempotent  # a cut wait runs again
    assert not Tool.from_function(calculator).idempotent  # said nothing: not assumed


class Helper:
    """A parent whose `delegate` starts a researcher; the researcher's one call hangs
    the first time (the worker is lost in it)."""

    def __init__(self, *, idempotent: bool) -> None:
        self.desk = Desk()
        self.idempotent = idempotent
        self.child_script = [
            Reply(calls=[Call("ops__slow", {})]),
            Reply(text="Owls hunt by sound."),
        ]

    def child_deps(
        self, kind: AgentType, config: AgentConfig, caps: OperatorLimits, parent: ToolContext
    ) -> RunDeps:
        tools = self.desk.tools(slow_idempotent=self.idempotent)
        slow = tools.get("ops__slow")
        assert slow is not None
        slow = replace(slow, needs_approval=False)  # a helper's tools never ask
        return RunDeps(
            model=ScriptedModel(list(self.child_script)),
            tree=DefaultDecisionTree(config, caps),
            tools=ToolRegistry([slow]),
        )

    def deps(self, model: ScriptedModel) -> RunDeps:
        delegation = Delegation([AgentType("researcher", "Looks things up.")], self.child_deps)
        tools = ToolRegistry([delegation.tool()])
        return RunDeps(model=model, tree=DefaultDecisionTree(AgentConfig()), tools=tools)

    async def lost_in_the_helpers_call(self) -> AgentState:
        saved: list[str] = []

        async def keep(state: AgentState) -> None:
            saved.append(state.to_json())

        task = {"agent_type": "researcher", "task": "How do owls hunt?"}
        model = ScriptedModel([Reply(calls=[Call("delegate", task)])])
        worker = asyncio.create_task(start_run("Owls?", self.deps(model), on_checkpoint=keep))
        await asyncio.wait_for(self.desk.slow_started.wait(), 5)
        lost = AgentState.from_json(saved[-1])
        worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await worker
        self.desk.hang = False
        return lost


async def test_a_helper_whose_call_may_have_acted_is_not_started_again() -> None:
    helper = Helper(idempotent=False)
    lost = await helper.lost_in_the_helpers_call()
    model = ScriptedModel([Reply(text="The helper was cut off.")])

    result = await resume_run(lost, helper.deps(model))

    assert result.final_text == "The helper was cut off."
    assert helper.desk.slow_calls == 1  # no second helper made the call again
    told = [m["content"] for m in model.calls[0].messages if m["role"] == "tool"]
    assert told == [INTERRUPTED_CALL]


async def test_a_helper_that_only_read_is_started_again() -> None:
    helper = Helper(idempotent=True)
    lost = await helper.lost_in_the_helpers_call()
    model = ScriptedModel([Reply(text="They hunt by sound.")])

    result = await resume_run(lost, helper.deps(model))

    assert result.final_text == "They hunt by sound."
    assert helper.desk.slow_calls == 2  # a fresh helper made its call again
    told = [m["content"] for m in model.calls[0].messages if m["role"] == "tool"]
    assert told == ["Owls hunt by sound."]
