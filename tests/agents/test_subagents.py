"""Subagents: `delegate` runs a helper agent with its own limits inside the parent's."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest

from agents.cancel import CancelToken
from agents.clock import Clock
from agents.config import AgentConfig, ConfigError, OperatorLimits
from agents.events import Event, EventCollector
from agents.loop import RunDeps, ToolContext, start_run, tool_context
from agents.subagents import AgentType, Delegation
from agents.testing.scripted import Call, Reply, Script, ScriptedModel, tool_loop
from agents.tools import ToolRegistry
from agents.tree import DefaultDecisionTree
from tests.agents.conftest import tool_set

RESEARCHER = AgentType("researcher", "Looks things up.", max_iterations=3, max_tool_calls=10)


class Setup:
    """A parent run whose `delegate` tool starts subagents playing `child_script`."""

    def __init__(
        self, child_script: Script, *, agent_types: tuple[AgentType, ...] = (RESEARCHER,)
    ) -> None:
        self.clock = Clock()
        self.child_model = ScriptedModel(child_script, clock=self.clock)
        self.child_caps: list[OperatorLimits] = []
        self.delegation = Delegation(agent_types, self.child_deps)

    def child_deps(
        self, kind: AgentType, config: AgentConfig, caps: OperatorLimits, parent: ToolContext
    ) -> RunDeps:
        self.child_caps.append(caps)
        tree = DefaultDecisionTree(config, caps)
        return RunDeps(model=self.child_model, tree=tree, tools=tool_set(), clock=parent.clock)

    async def run(
        self, script: Script, *, sink: Any = None, cancel: CancelToken | None = None, **config: Any
    ) -> tuple[Any, EventCollector, ScriptedModel]:
        tools = tool_set()
        tools.add(self.delegation.tool())
        model = ScriptedModel(script, clock=self.clock)
        tree = DefaultDecisionTree(AgentConfig.from_raw(config))
        deps = RunDeps(model=model, tree=tree, tools=tools, clock=self.clock)
        events = EventCollector()

        async def on_event(event: Event) -> None:
            await events(event)
            if sink is not None:
                await sink(event)

        result = await start_run("Research this.", deps, on_event=on_event, cancel=cancel)
        return result, events, model


def delegating(then: str = "The answer, from the research.") -> list[Reply]:
    return [
        Reply(text="Let me ask a researcher. ", calls=[Call("delegate", DELEGATE)]),
        Reply(text=then),
    ]


DELEGATE = {"agent_type": "researcher", "task": "Find notes about owls."}


async def test_a_subagent_stops_at_its_own_limit_while_the_parent_goes_on() -> None:
    # The parent allows 15 iterations; the researcher's own limit is 3.
    setup = Setup(tool_loop("lookup", lambda i: {"topic": f"owls {i}"}))
    result, events, _ = await setup.run(delegating())

    (finished,) = events.of_type("subagent.finished")
    assert finished["reason"] == "max_iterations"
    assert finished["counters"]["iterations"] == 3
    assert len(setup.child_model.calls) == 3  # never a fourth call
    (delegated,) = [e for e in events.of_type("tool.result") if e["name"] == "delegate"]
    assert delegated["ok"]
    assert delegated["content"].startswith("The researcher stopped before finishing")
    assert "Summary: here is what the tools told me." in delegated["content"]
    # The parent read that result and answered.
    assert result.reason.value == "completed"
    assert result.final_text == "The answer, from the research."


async def test_the_subagent_shows_its_steps_and_limits_but_not_its_text() -> None:
    setup = Setup(
        [Reply(text="Looking. ", calls=[Call("lookup", {"topic": "owls"})]), Reply("Owls hoot.")]
    )
    _, events, _ = await setup.run(delegating())

    (started,) = events.of_type("subagent.started")
    assert started["agent_type"] == "researcher"
    assert started["task"] == "Find notes about owls."
    assert started["limits"]["max_iterations"] == 3
    steps = [e["event"] for e in events.of_type("subagent.step")]
    tools = [s for s in steps if s["type"].startswith("tool.")]
    assert [(s["type"], s["name"]) for s in tools] == [
        ("tool.call", "lookup"),
        ("tool.result", "lookup"),
    ]
    assert tools[1]["content"] == "Notes about owls."
    notices = [s["text"] for s in steps if s["type"] == "system.notice"]
    assert notices and "Approaching the iteration limit" in notices[0]  # its own warning
    assert all(e["call_id"] == started["call_id"] for e in events.of_type("subagent.step"))
    # The subagent's words reach the parent only as the delegate tool's result.
    deltas = "".join(e["text"] for e in events.of_type("assistant.delta"))
    assert "Looking." not in deltas and "Owls hoot." not in deltas
    (delegated,) = [e for e in events.of_type("tool.result") if e["name"] == "delegate"]
    assert delegated["content"] == "Owls hoot."  # its answer
    seqs = [e["seq"] for e in events.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


async def test_subagent_tokens_and_cost_count_toward_the_parent_as_they_are_spent() -> None:
    child = [Reply(calls=[Call("lookup", {"topic": f"t{i}"})], usage=(400, 100)) for i in range(2)]
    setup = Setup([*child, Reply("Done.", usage=(400, 100))])
    headroom: list[int] = []

    async def watch(event: Event) -> None:
        if event["type"] == "subagent.progress":
            context = tool_context()  # the parent's delegate call, still running
            assert context is not None
            headroom.append(context.headroom().tokens)

    result, events, _ = await setup.run(delegating(), sink=watch, token_budget=20_000)

    # After each of the subagent's calls the parent had 500 tokens less.
    assert [a - b for a, b in itertools.pairwise(headroom)] == [500, 500]
    (finished,) = events.of_type("subagent.finished")
    assert finished["counters"]["tokens"] == 1_500
    own = 2 * (50 + 10)  # the parent's two calls
    assert result.state.total.tokens == own + 1_500
    assert events.of_type("run.finished")[0]["tokens"] == own + 1_500


async def test_the_parents_budget_bounds_the_subagent_even_below_its_own_limits() -> None:
    # The researcher may spend 20,000 tokens, the parent has 3,000 in all.
    spender = AgentType("researcher", "Spends.", max_iterations=20, token_budget=20_000)
    setup = Setup(
        lambda i, request: (
            Reply(calls=[Call("lookup", {"topic": f"t{i}"})], usage=(300, 100))
            if request.tools
            else Reply("Partial findings.", usage=(300, 100))
        ),
        agent_types=(spender,),
    )
    result, events, _ = await setup.run(delegating(), token_budget=3_000)

    (caps,) = setup.child_caps
    assert caps.token_budget < 3_000  # a share of what the parent had left
    (finished,) = events.of_type("subagent.finished")
    assert finished["reason"] == "token_budget"
    assert finished["counters"]["tokens"] <= caps.token_budget
    # The parent kept room to read the result and answer.
    assert result.reason.value == "completed"
    assert result.state.total.tokens <= 3_000


async def test_a_parent_stopped_mid_delegation_keeps_its_chain_and_none_of_the_subagent() -> None:
    setup = Setup([Reply(text=["Secret ", "draft "], chunk_delay=0.05, hang=True)])
    cancel = CancelToken()

    async def stop_once_started(event: Event) -> None:
        if event["type"] == "subagent.started":
            asyncio.get_running_loop().call_later(0.3, cancel.cancel)

    result, events, _ = await setup.run(delegating(), sink=stop_once_started, cancel=cancel)

    assert result.reason.value == "cancelled"
    assert setup.child_model.closed_streams == 1  # the subagent's call was cut off
    assert events.of_type("subagent.finished") == []
    history = json.dumps(result.state.messages)
    assert "Secret" not in history and "draft" not in history
    assert "Secret" not in json.dumps(events.events)
    (delegated,) = [e for e in events.of_type("tool.result") if e["name"] == "delegate"]
    assert not delegated["ok"] and delegated["content"] == "Not run: the run stopped first."
    assert delegated["not_run"] == "stopped"  # the chat shows it stopped, not failed
    # The main chain is kept: the step that delegated, then the stop.
    assert "Let me ask a researcher." in history
    assert result.final_text.startswith("Stopped: the run was cancelled.")


async def test_the_parents_time_limit_stops_the_subagent_first_and_the_parent_answers() -> None:
    slow = [Reply(calls=[Call("lookup", {"topic": "t"})], advance_clock=8) for _ in range(5)]
    setup = Setup([*slow, Reply("Late.")], agent_types=(AgentType("researcher", "Slow.", 10),))
    result, events, _ = await setup.run(delegating(), timeout_seconds=20)

    (finished,) = events.of_type("subagent.finished")
    assert finished["reason"] == "timeout"
    assert result.reason.value == "completed"  # the parent still had time to answer


async def test_bad_delegations_are_error_results_the_model_can_read() -> None:
    setup = Setup([Reply("unused")])
    script = [
        Reply(calls=[Call("delegate", {"agent_type": "poet", "task": "A sonnet."})]),
        Reply(calls=[Call("delegate", {"agent_type": "researcher", "task": "   "})]),
        Reply("I will answer myself."),
    ]
    result, events, _ = await setup.run(script)

    results = [e for e in events.of_type("tool.result") if e["name"] == "delegate"]
    assert [r["ok"] for r in results] == [False, False]
    assert "unknown agent type 'poet' (choose one of: researcher)" in results[0]["content"]
    assert "the task is empty" in results[1]["content"]
    assert setup.child_model.calls == []
    assert result.reason.value == "completed"


async def test_too_little_budget_left_means_no_subagent() -> None:
    setup = Setup([Reply("unused")])
    script = [
        Reply(calls=[Call("lookup", {"topic": "x"})], advance_clock=16.5),
        Reply(calls=[Call("delegate", DELEGATE)]),
        Reply("Answer."),
    ]
    _, events, _ = await setup.run(script, timeout_seconds=20)

    (delegated,) = [e for e in events.of_type("tool.result") if e["name"] == "delegate"]
    assert not delegated["ok"]
    assert "too little of this run's budget is free to delegate" in delegated["content"]
    assert setup.child_model.calls == []


def test_the_tool_describes_each_agent_type() -> None:
    tool = Setup([]).delegation.tool()
    assert tool.name == "delegate"
    assert "researcher: Looks things up." in tool.description
    assert tool.schema["function"]["parameters"]["required"] == ["agent_type", "task"]


def test_an_agent_type_keeps_agent_config_bounds() -> None:
    with pytest.raises(ConfigError) as raised:
        AgentType("x", "Too many.", max_iterations=500).config()
    assert "max_iterations" in raised.value.errors
    assert AgentType("x", "Fine.", max_iterations=50).config().limit_action.value == "stop"


async def test_outside_a_run_delegate_refuses() -> None:
    registry = ToolRegistry([Setup([]).delegation.tool()])
    result = await registry.run("c1", "delegate", json.dumps(DELEGATE))
    assert not result.ok and "only inside a run" in result.content


async def test_helpers_working_at_once_share_what_the_parent_has_left() -> None:
    setup = Setup(lambda i, request: Reply(f"Finding {i}.", usage=(300, 50)))
    both = [Call("delegate", {"agent_type": "researcher", "task": f"Part {n}."}) for n in (1, 2)]
    script = [Reply(calls=both, usage=(500, 50)), Reply("Both parts.")]

    result, events, _ = await setup.run(script, token_budget=10_000)

    first, second = setup.child_caps
    # What the first may still spend is kept from the second's share, so the two
    # together never hold more than the parent had left (10,000 less its 550).
    assert first.token_budget + second.token_budget <= 10_000 - 550
    assert second.token_budget < first.token_budget
    assert [e["reason"] for e in events.of_type("subagent.finished")] == ["completed"] * 2
    assert result.state.total.tokens == 550 + 2 * 350 + 60
