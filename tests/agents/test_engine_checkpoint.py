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
    states = [AgentState.from_json(text) for text in saved]
    # Before iterations 1, 2 and 3, before deciding to finish, and in each tool step
    # between the model's asking and the tools' answering.
    assert [s.total.iterations for s in states] == [0, 1, 1, 2, 2, 3]
    assert [s.messages[-1]["role"] for s in states] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


async def test_a_run_resumed_from_a_checkpoint_finishes_without_redoing_work() -> None:
    saved: list[str] = []

    async def keep(state: AgentState) -> None:
        saved.append(state.to_json())

    await start_run("What is 6*7?", deps_for(ScriptedModel(SCRIPT)), on_checkpoint=keep)
    states = [AgentState.from_json(text) for text in saved]  # as a new worker would load one
    (after_two,) = [
        s for s in states if s.total.iterations == 2 and s.messages[-1]["role"] == "tool"
    ]
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


async def test_a_run_lost_while_its_tools_ran_runs_them_again_without_asking_the_model() -> None:
    saved: list[str] = []

    async def keep(state: AgentState) -> None:
        saved.append(state.to_json())

    await start_run("What is 6*7?", deps_for(ScriptedModel(SCRIPT)), on_checkpoint=keep)
    states = [AgentState.from_json(text) for text in saved]
    mid_step = [s for s in states if s.messages[-1]["role"] == "assistant"]
    lost = mid_step[1]  # the model asked for 6*7; the worker died before the answer was kept
    model = ScriptedModel(SCRIPT[2:])
    events = EventCollector()

    result = await resume_run(lost, deps_for(model), on_event=events)

    assert result.final_text == "6*7 is 42."
    assert len(model.calls) == 1  # the step's model call was not made again
    tool_results = [m for m in model.calls[0].messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == ["6", "42"]
    assert (result.state.total.iterations, result.state.total.tool_calls) == (3, 2)
    assert events.types()[:2] == ["run.resumed", "tool.result"]  # announced before the loss
    assert events.of_type("tool.call") == []


async def test_a_warning_given_before_a_call_is_not_given_again_when_the_run_resumes() -> None:
    saved: list[str] = []

    async def keep(state: AgentState) -> None:
        saved.append(state.to_json())

    steps = [Reply(calls=[Call("calculator", {"expression": f"{n}+{n}"})]) for n in (1, 2, 3)]
    model = ScriptedModel([*steps, Reply(text="Done.")])
    tree = DefaultDecisionTree(AgentConfig(max_iterations=5))
    first = EventCollector()
    await start_run(
        "Add", RunDeps(model=model, tree=tree, tools=tool_set()), on_event=first,
        on_checkpoint=keep,
    )  # fmt: skip
    (warning,) = first.of_type("system.notice")  # before the fourth call: two are left
    assert warning["text"].startswith("Approaching the iteration limit (3 of 5)")
    # The worker is lost during the fourth call: a new one loads the last checkpoint.
    (before_fourth,) = [
        AgentState.from_json(text) for text in saved
        if AgentState.from_json(text).total.iterations == 3
        and AgentState.from_json(text).messages[-1]["role"] == "tool"
    ]  # fmt: skip
    again = EventCollector()

    resumed = ScriptedModel([Reply(text="Done.")])

    result = await resume_run(
        before_fourth, RunDeps(model=resumed, tree=tree, tools=tool_set()), on_event=again
    )

    assert result.final_text == "Done."
    assert again.of_type("system.notice") == []  # given once, before the worker was lost
    # The model still gets the wrap-up hint that came with the warning, once.
    asked = [m["content"] for m in resumed.calls[0].messages if m["role"] == "system"]
    assert sum("Start wrapping up" in text for text in asked) == 1
