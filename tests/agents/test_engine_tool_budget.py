"""The tool-call budget: per-call counting, parallel calls, wind-down, the violation message."""

from __future__ import annotations

import asyncio

from agents.testing.scripted import Call, Reply
from agents.tools import Tool, ToolRegistry


def three_lookups(first: int) -> Reply:
    return Reply(calls=[Call("lookup", {"topic": f"t{first + n}"}) for n in range(3)])


async def test_each_call_of_a_parallel_batch_counts_against_the_budget(run):
    outcome = await run([three_lookups(0), three_lookups(3), Reply(text="Done.")])

    assert outcome.reason == "completed"
    assert outcome.finished["tool_calls"] == 6
    assert outcome.finished["iterations"] == 3


async def test_a_spent_tool_budget_winds_down_and_ends_with_tool_budget(run):
    outcome = await run(
        [three_lookups(0), three_lookups(3), Reply(text="Summary of six lookups.")],
        max_tool_calls_per_turn=6,
    )

    assert outcome.model.calls[2].tools is None
    assert outcome.reason == "tool_budget"
    assert outcome.result.final_text == (
        "Stopped: reached the tool-call limit (6 of 6). Here is what I found so far:\n\n"
        "Summary of six lookups."
    )


async def test_calls_past_the_budget_are_not_run_and_the_model_is_told(run):
    outcome = await run(
        [three_lookups(0), three_lookups(3), Reply(text="Summary.")], max_tool_calls_per_turn=4
    )

    results = outcome.events.of_type("tool.result")
    assert [r["ok"] for r in results] == [True] * 4 + [False] * 2
    assert "tool-call budget of this run is used up" in results[-1]["content"]
    assert outcome.finished["tool_calls"] == 4  # never past the limit
    assert outcome.reason == "tool_budget"


async def test_tool_calls_after_the_wind_down_end_with_the_violation_message(run):
    outcome = await run(
        [
            three_lookups(0),
            Reply(text="Let me look once more.", calls=[Call("lookup", {"topic": "x"})]),
        ],
        max_tool_calls_per_turn=3,
    )

    assert outcome.reason == "tool_budget_violation"
    assert outcome.result.final_text == (
        "I used all available tool calls before I could finish.\n\nLet me look once more."
    )
    assert outcome.finished["tool_calls"] == 3
    assert outcome.finished["failure_class"] == "deterministic"
    notice = outcome.notices()[-1]
    assert (notice["metric"], notice["value"], notice["limit"]) == ("tool_calls", 3, 3)
    assert "(3 of 3)" in notice["text"]


async def test_tool_calls_on_the_last_call_of_an_iteration_limit_name_the_iteration_limit(run):
    outcome = await run(
        [
            three_lookups(0),
            three_lookups(3),
            Reply(text="Let me look once more.", calls=[Call("lookup", {"topic": "x"})]),
        ],
        max_iterations=3,
    )

    assert outcome.model.calls[2].tools is None  # the last allowed call, without tools
    assert outcome.reason == "tool_budget_violation"  # the stable code
    assert outcome.result.final_text == (
        "I reached the iteration limit (3 of 3) before I could finish: my last step "
        "still asked for tools, which were not run.\n\nLet me look once more."
    )
    notice = outcome.notices()[-1]
    assert (notice["metric"], notice["value"], notice["limit"]) == ("iterations", 3, 3)
    assert "tool-call" not in notice["text"] and "iteration limit (3 of 3)" in notice["text"]
    assert outcome.finished["metric"] == "iterations"  # the badge names the iteration limit


async def test_tool_calls_of_one_response_run_at_most_max_parallel_tools_at_once(run):
    running = 0
    peak = 0

    async def slow_lookup(topic: str) -> str:
        """Look something up slowly.

        Args:
            topic: What to look up.
        """
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.02)
        running -= 1
        return topic

    tools = ToolRegistry([Tool.from_function(slow_lookup)])
    batch = Reply(calls=[Call("slow_lookup", {"topic": f"t{n}"}) for n in range(5)])

    outcome = await run([batch, Reply(text="Done.")], tools=tools, max_parallel_tools=2)
    assert peak == 2
    assert outcome.finished["tool_calls"] == 5

    peak = 0
    await run([batch, Reply(text="Done.")], tools=tools, max_parallel_tools=5)
    assert peak == 5


async def test_a_response_that_spends_the_whole_tool_budget_at_once_is_warned_before_the_end(run):
    outcome = await run(
        [three_lookups(0), Reply(text="Summary of three.")], max_tool_calls_per_turn=3
    )

    notices = outcome.notices()
    assert notices[0]["text"] == (
        "Reached the tool-call limit (3 of 3) in one step. "
        "The Oracle has been asked to answer with what it has."
    )
    last_call = outcome.events.of_type("assistant.message")[-1]
    assert notices[0]["seq"] < last_call["seq"]  # before the wind-down answer, not with it
    assert outcome.reason == "tool_budget"
