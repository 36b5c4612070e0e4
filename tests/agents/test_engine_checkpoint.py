"""Checkpoints: between iterations the engine hands out a whole state that a new
process can resume from (what the worker saves for crash recovery)."""

from __future__ import annotations

from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, resume_run, start_run
from agents.state import AgentState
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tree import DefaultDecisionTree
from tests.agents.conftest import tool_set

SCRIPT = [
    Reply(calls=[Call("calculator", {"expression": "2*3"})]),
    Reply(calls=[Call("calculator", {"expression": "6*7"})]),
    Reply(text="6*7 is 42."),
]


def deps_for(model: ScriptedModel) -> RunDeps:
    return RunDeps(model=model, tree=DefaultDecisionTree(AgentConfig()), tools=tool_set())


async def test_a_checkpoint_comes_before_every_iteration_and_the_ending() -> None:
    saved: list[str] = []

    async def keep(state: AgentState) -> None:
        saved.append(state.to_json())

    result = await start_run("What is 6*7?", deps_for(ScriptedModel(SCRIPT)), on_checkpoint=keep)

    assert result.reason is not None and result.reason.value == "completed"
    assert len(saved) == 4  # before iterations 1, 2, 3, and before deciding to finish
    iterations = [AgentState.from_json(text).total.iterations for text in saved]
    assert iterations == [0, 1, 2, 3]


async def test_a_run_resumed_from_a_checkpoint_finishes_without_redoing_work() -> None:
    saved: list[str] = []

    async def keep(state: AgentState) -> None:
        saved.append(state.to_json())

    await start_run("What is 6*7?", deps_for(ScriptedModel(SCRIPT)), on_checkpoint=keep)
    after_two = AgentState.from_json(saved[2])  # as a new worker would load it
    model = ScriptedModel(SCRIPT[2:])
    events = EventCollector()

    result = await resume_run(after_two, deps_for(model), on_event=events)

    assert result.final_text == "6*7 is 42."
    assert result.state.total.iterations == 3
    assert result.state.total.tool_calls == 2
    assert len(model.calls) == 1  # only the missing iteration was asked for
    tool_results = [m for m in model.calls[0].messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == ["6", "42"]
    assert events.types()[0] == "run.resumed"
