"""The offline model: works with no network, really uses the tools, says what it is."""

from __future__ import annotations

from agents.builtin_tools import builtin_tools
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, start_run
from agents.offline_model import HOW_TO_CONFIGURE, OfflineModel
from agents.offline_reading import find_arithmetic
from agents.tree import DefaultDecisionTree


async def ask_offline(question: str):
    deps = RunDeps(
        model=OfflineModel(), tree=DefaultDecisionTree(AgentConfig()), tools=builtin_tools()
    )
    events = EventCollector()
    result = await start_run(question, deps, on_event=events)
    return result, events


async def test_it_computes_arithmetic_with_the_calculator():
    result, events = await ask_offline("what is 17*23")

    (call,) = events.of_type("tool.call")
    assert call["name"] == "calculator" and call["arguments"] == {"expression": "17*23"}
    assert result.reason.value == "completed"
    assert "391" in result.final_text
    assert "offline model" in result.final_text
    assert events.events[0]["model"] == "oracle/offline"


async def test_it_tells_the_time_with_current_time():
    result, events = await ask_offline("What time is it?")

    (call,) = events.of_type("tool.call")
    assert call["name"] == "current_time"
    assert result.final_text.startswith("It is 20")


async def test_other_questions_get_a_plain_answer_with_how_to_configure_a_model():
    result, events = await ask_offline("Who wrote Hamlet?")

    assert events.of_type("tool.call") == []
    assert "offline model" in result.final_text
    assert "ORACLE_MODEL=openai/gpt-4o-mini" in result.final_text
    assert "OPENAI_API_KEY" in result.final_text
    assert len(events.of_type("assistant.delta")) >= 3  # streamed in a few chunks


def test_it_finds_the_arithmetic_in_a_question():
    assert find_arithmetic("what is 17*23?") == "17*23"
    assert find_arithmetic("Compute (2 + 3) ^ 2 please.") == "(2 + 3) ^ 2"
    assert find_arithmetic("what is 12 times 3") == "12 * 3"
    assert find_arithmetic("what happened in 1969") is None


async def test_the_setup_hint_is_given_once_per_conversation() -> None:
    deps = RunDeps(
        model=OfflineModel(), tree=DefaultDecisionTree(AgentConfig()), tools=builtin_tools()
    )
    first = await start_run("Who wrote Hamlet?", deps)
    history = [
        {"role": "user", "content": "Who wrote Hamlet?"},
        {"role": "assistant", "content": first.final_text},
    ]
    second = await start_run("Who painted the Mona Lisa?", deps, history=history)

    assert HOW_TO_CONFIGURE in first.final_text
    assert "but not answer this" in second.final_text
    assert HOW_TO_CONFIGURE not in second.final_text


async def test_a_warning_after_the_tool_result_does_not_make_it_call_again() -> None:
    deps = RunDeps(
        model=OfflineModel(),
        tree=DefaultDecisionTree(AgentConfig.from_raw({"max_iterations": 3})),
        tools=builtin_tools(),
    )
    events = EventCollector()
    result = await start_run("what is 17*23", deps, on_event=events)

    assert result.state.messages[-2]["role"] == "system"  # the warning's hint, after the tool
    assert [call["name"] for call in events.of_type("tool.call")] == ["calculator"]
    assert "17*23 = 391." in result.final_text
