"""The user's custom instructions: sent with every model call of their runs, after the
Oracle's own system prompt and set apart from it; a continued run takes the current
ones; a subagent works under them too; the run says it used them."""

from __future__ import annotations

import pytest

from agents.config import AgentConfig, ConfigError
from agents.events import EventCollector
from agents.loop import SYSTEM_PROMPT, RunDeps, continue_run
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tree import DefaultDecisionTree
from tests.agents.conftest import run_script
from tests.agents.test_subagents import DELEGATE, Setup

INSTRUCTIONS = "Answer in French.\nCall me Captain."


def system_of(model: ScriptedModel, call: int = 0) -> str:
    message = model.calls[call].messages[0]
    assert message["role"] == "system"
    return str(message["content"])


async def test_the_system_prompt_carries_the_instructions_after_the_oracles_own():
    outcome = await run_script([Reply(text="Bonjour, Captain.")], custom_instructions=INSTRUCTIONS)

    system = system_of(outcome.model)
    assert system.startswith(SYSTEM_PROMPT)
    tail = system.removeprefix(SYSTEM_PROMPT)
    assert "custom instructions" in tail
    assert f"<custom_instructions>\n{INSTRUCTIONS}\n</custom_instructions>" in tail
    assert outcome.finished["instructions"] == INSTRUCTIONS


async def test_without_instructions_the_system_prompt_is_the_oracles_alone():
    outcome = await run_script([Reply(text="Hello.")])

    assert system_of(outcome.model) == SYSTEM_PROMPT
    assert "instructions" not in outcome.finished


async def test_every_call_of_the_run_carries_them():
    script = [Reply(calls=[Call("calculator", {"expression": "1+1"})]), Reply(text="2.")]
    outcome = await run_script(script, custom_instructions=INSTRUCTIONS)

    assert len(outcome.model.calls) == 2
    assert INSTRUCTIONS in system_of(outcome.model, 1)
    assert system_of(outcome.model, 1).count("<custom_instructions>") == 1


async def stopped_run(instructions: str):
    script = [Reply(calls=[Call("calculator", {"expression": "1+1"})]), Reply(text="So far: 2.")]
    first = await run_script(script, max_iterations=2, custom_instructions=instructions)
    assert first.reason == "max_iterations"
    return first


async def continued(first, instructions: str) -> tuple[ScriptedModel, EventCollector]:
    model = ScriptedModel([Reply(text="Done.")])
    config = AgentConfig.from_raw({"custom_instructions": instructions})
    deps = RunDeps(model=model, tree=DefaultDecisionTree(config), tools=first.deps.tools)
    events = EventCollector()
    await continue_run(first.result.state, deps, on_event=events)
    return model, events


async def test_a_continued_run_takes_the_instructions_as_they_are_now():
    first = await stopped_run(INSTRUCTIONS)

    model, events = await continued(first, "Be terse.")

    system = system_of(model)
    assert system.startswith(SYSTEM_PROMPT)
    assert "Be terse." in system and "Captain" not in system
    (finished,) = events.of_type("run.finished")
    assert finished["instructions"] == "Be terse."


async def test_a_run_continued_after_the_instructions_were_cleared_has_none():
    first = await stopped_run(INSTRUCTIONS)

    model, events = await continued(first, "")

    assert system_of(model) == SYSTEM_PROMPT
    (finished,) = events.of_type("run.finished")
    assert "instructions" not in finished


async def test_a_subagent_works_under_the_users_instructions_too():
    setup = Setup([Reply(text="Owls hunt at night.")])
    script = [Reply(calls=[Call("delegate", DELEGATE)]), Reply(text="They hunt at night.")]

    await setup.run(script, custom_instructions=INSTRUCTIONS)

    child = system_of(setup.child_model)
    assert child.startswith("You are a researcher")
    assert f"<custom_instructions>\n{INSTRUCTIONS}\n</custom_instructions>" in child


def test_blank_instructions_are_none_and_line_ends_are_kept_plain():
    assert AgentConfig.from_raw({"custom_instructions": "  \n "}).custom_instructions == ""
    config = AgentConfig.from_raw({"custom_instructions": " Be brief.\r\nUse SI units. "})
    assert config.custom_instructions == "Be brief.\nUse SI units."
    assert AgentConfig().custom_instructions == ""


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("x" * 4001, "Must be at most 4,000 characters (this is 4,001)."),
        (42, "Must be text."),
        (["Be brief."], "Must be text."),
        ("Be\x00brief", "Must be plain text, without control characters."),
    ],
    ids=["too-long", "number", "list", "control-character"],
)
def test_bad_instructions_are_refused_with_a_clear_message(value, message):
    with pytest.raises(ConfigError) as caught:
        AgentConfig.from_raw({"custom_instructions": value})

    assert caught.value.errors == {"custom_instructions": [message]}


def test_the_longest_instructions_allowed_are_kept_whole():
    text = "y" * 4000
    assert AgentConfig.from_raw({"custom_instructions": text}).custom_instructions == text
