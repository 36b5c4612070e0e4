"""A run's tree of helpers is bounded: how many helpers it starts in all, how deep helpers
start helpers, how many work at once. A delegation past a bound is refused before any
helper starts, a tool error the model can act on, counted as a `tool.refused`."""

from __future__ import annotations

from typing import Any

from agents.clock import Clock
from agents.config import AgentConfig, CallBounds, OperatorLimits
from agents.events import EventCollector
from agents.loop import RunDeps, ToolContext, start_run
from agents.subagents import AgentType, Delegation
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tree import DefaultDecisionTree
from tests.agents.conftest import tool_set

RESEARCHER = AgentType("researcher", "Looks things up.", max_iterations=4)
CLERK = AgentType("clerk", "Files things.", max_iterations=4)


def ask(agent_type: str, task: str) -> Call:
    return Call("delegate", {"agent_type": agent_type, "task": task})


class Tree:
    """A run whose helpers may delegate too (as Oracle's own tools build them), each
    agent type answering from its own scripted model."""

    def __init__(self, bounds: CallBounds, **scripts: Any) -> None:
        self.bounds = bounds
        self.clock = Clock()
        self.models = {
            name: ScriptedModel(script, clock=self.clock) for name, script in scripts.items()
        }

    def delegation(self) -> Delegation:
        return Delegation((RESEARCHER, CLERK), self.helper_deps, self.bounds)

    def helper_deps(
        self, kind: AgentType, config: AgentConfig, caps: OperatorLimits, parent: ToolContext
    ) -> RunDeps:
        tools = tool_set()
        tools.add(self.delegation().tool())  # offered: the engine takes it away past the depth
        return RunDeps(model=self.models[kind.name], tree=DefaultDecisionTree(config, caps),
                       tools=tools, clock=parent.clock)  # fmt: skip

    async def run(self, **config: Any) -> tuple[Any, EventCollector]:
        tools = tool_set()
        tools.add(self.delegation().tool())
        tree = DefaultDecisionTree(AgentConfig.from_raw(config))
        deps = RunDeps(model=self.models["oracle"], tree=tree, tools=tools, clock=self.clock)
        events = EventCollector()
        result = await start_run("Research this.", deps, on_event=events)
        return result, events


def delegate_results(events: EventCollector) -> list[dict[str, Any]]:
    return [e for e in events.of_type("tool.result") if e["name"] == "delegate"]


async def test_a_run_starts_no_more_helpers_than_the_operator_allows() -> None:
    tree = Tree(
        CallBounds(subagents_max_per_run=2),
        oracle=[Reply(calls=[ask("researcher", f"Part {n}.")]) for n in (1, 2, 3)]
        + [Reply("Two parts found; I looked at the third myself.")],
        researcher=lambda i, request: Reply(f"Found part {i + 1}."),
    )

    result, events = await tree.run()

    first, second, third = delegate_results(events)
    assert (first["content"], second["content"]) == ("Found part 1.", "Found part 2.")
    assert not third["ok"]
    assert "this run has started 2 helpers, the most it may (2)" in third["content"]
    assert "do the rest yourself" in third["content"]
    assert len(events.of_type("subagent.started")) == 2  # the third never started
    (refused,) = events.of_type("tool.refused")
    assert (refused["reason"], refused["metric"], refused["value"], refused["limit"]) == (
        "subagents_per_run", "subagents", 3, 2,
    )  # fmt: skip
    assert result.reason.value == "completed"


async def test_no_more_helpers_work_at_once_than_the_operator_allows() -> None:
    tree = Tree(
        CallBounds(subagents_max_concurrent=1),
        oracle=[
            Reply(calls=[ask("researcher", "Part 1."), ask("researcher", "Part 2.")]),
            Reply("One part now, the other next."),
        ],
        researcher=[Reply("Found part 1.", delay=0.05)],
    )

    result, events = await tree.run(max_parallel_tools=3)

    # The second was refused at once, while the first worked on.
    second, first = delegate_results(events)
    assert first["ok"] and first["content"] == "Found part 1."
    assert not second["ok"]
    assert "as many helpers are working now as may work at once (1)" in second["content"]
    assert "once one has answered" in second["content"]
    assert len(events.of_type("subagent.started")) == 1
    (refused,) = events.of_type("tool.refused")
    assert (refused["reason"], refused["value"], refused["limit"]) == ("subagents_at_once", 2, 1)
    assert result.reason.value == "completed"


async def test_helpers_start_no_helpers_of_their_own_by_default() -> None:
    tree = Tree(
        CallBounds(),
        oracle=[Reply(calls=[ask("researcher", "Find owls.")]), Reply("Owls found.")],
        researcher=[Reply("Owls hoot.")],
    )

    result, _ = await tree.run()

    (helper_call,) = tree.models["researcher"].calls
    assert helper_call.tools is not None and "delegate" not in helper_call.tools
    assert "delegate" in (tree.models["oracle"].calls[0].tools or [])
    assert result.reason.value == "completed"


async def test_deeper_helpers_count_in_the_same_run_and_the_deepest_cannot_delegate() -> None:
    tree = Tree(
        CallBounds(subagents_max_depth=2, subagents_max_per_run=2),
        oracle=[Reply(calls=[ask("researcher", "Find and file owls.")]), Reply("Filed.")],
        researcher=[
            Reply(calls=[ask("clerk", "File owls.")]),
            Reply(calls=[ask("clerk", "File more owls.")]),
            Reply("One filed; the run had no helper left for the other."),
        ],
        clerk=[Reply("Filed owls.")],
    )

    result, events = await tree.run()

    # The researcher (depth 1) was offered delegate; the clerk (depth 2, the deepest) not.
    assert "delegate" in (tree.models["researcher"].calls[0].tools or [])
    assert "delegate" not in (tree.models["clerk"].calls[0].tools or [])
    # The clerk was the run's second helper: the researcher's next delegation was refused.
    steps = [e["event"] for e in events.of_type("subagent.step")]
    results = [s for s in steps if s["type"] == "tool.result" and s["name"] == "delegate"]
    assert results[0]["ok"] and results[0]["content"] == "Filed owls."
    assert (
        not results[1]["ok"] and "started 2 helpers, the most it may (2)" in results[1]["content"]
    )
    # The helper's refusal reaches the run's own stream, for the limit log.
    (refused,) = events.of_type("tool.refused")
    assert refused["reason"] == "subagents_per_run"
    assert result.reason.value == "completed"
