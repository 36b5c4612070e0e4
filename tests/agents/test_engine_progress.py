"""Being stuck: the same action repeated, and tool errors in a row."""

from __future__ import annotations

import itertools

from agents.testing.scripted import Call, Reply, tool_loop
from agents.tools import Tool, ToolRegistry


async def test_the_same_action_three_times_in_a_row_ends_with_no_progress(run):
    outcome = await run(tool_loop("lookup", lambda i: {"topic": "owls"}))

    assert outcome.reason == "no_progress"
    assert outcome.finished["tool_calls"] == 3
    assert outcome.result.final_text.startswith(
        "Stopped: I repeated the same steps without making progress "
        "(3 identical calls of lookup(owls) in a row)."
    )
    assert outcome.finished["failure_class"] == "deterministic"
    notice = outcome.notices()[-1]
    assert (notice["metric"], notice["value"], notice["limit"]) == ("repeats", 3, 3)
    assert notice["text"].startswith(
        "Stopped making progress: 3 identical calls of lookup(owls) in a row (limit 3)."
    )


async def test_argument_order_does_not_make_an_action_new(run):
    replies = [
        Reply(calls=[Call("calculator", '{"expression": "1+1"}')]),
        Reply(calls=[Call("calculator", '{ "expression":"1+1" }')]),
        Reply(calls=[Call("calculator", {"expression": "1+1"})]),
    ]
    outcome = await run(replies)

    assert outcome.reason == "no_progress"


async def test_the_same_tool_with_other_arguments_is_progress(run):
    outcome = await run(tool_loop("lookup", lambda i: {"topic": f"owls {i}"}), max_iterations=8)

    assert outcome.reason == "max_iterations"
    assert outcome.finished["tool_calls"] == 7


async def test_a_run_stopped_before_it_wrote_names_what_its_steps_found(run):
    outcome = await run(tool_loop("lookup", lambda i: {"topic": "owls"}))

    assert outcome.reason == "no_progress"
    assert "I had not written an answer yet" not in outcome.result.final_text
    assert outcome.result.final_text.endswith(
        "I had not written an answer; what my steps found:\n\n- lookup: Notes about owls."
    )  # the same result three times is said once


async def test_a_stopped_run_leaves_failed_steps_out_of_what_they_found(run):
    outcome = await run(tool_loop("broken", lambda i: {"topic": f"t{i}"}))

    assert outcome.reason == "tool_errors"
    assert outcome.result.final_text.endswith(
        "I had not written an answer yet; the steps I took are shown above."
    )  # nothing found: nothing to name


async def test_no_progress_repeats_is_configurable(run):
    outcome = await run(tool_loop("lookup", lambda i: {"topic": "owls"}), no_progress_repeats=5)

    assert outcome.reason == "no_progress"
    assert outcome.finished["tool_calls"] == 5


async def test_consecutive_tool_errors_end_the_run(run):
    outcome = await run(tool_loop("broken", lambda i: {"topic": f"t{i}"}))

    assert outcome.reason == "tool_errors"
    assert outcome.finished["tool_calls"] == 3
    assert outcome.result.final_text.startswith("Stopped: my tool calls kept failing.")
    notice = outcome.notices()[-1]
    assert (notice["metric"], notice["value"], notice["limit"]) == ("tool_errors", 3, 3)
    assert notice["text"].startswith("Stopped: 3 tool calls failed in a row (limit 3).")


async def test_a_successful_call_resets_the_error_count(run):
    replies = [
        Reply(calls=[Call("broken", {"topic": "a"})]),
        Reply(calls=[Call("broken", {"topic": "b"})]),
        Reply(calls=[Call("lookup", {"topic": "c"})]),
        Reply(calls=[Call("broken", {"topic": "d"})]),
        Reply(calls=[Call("broken", {"topic": "e"})]),
        Reply(text="Done despite the errors."),
    ]
    outcome = await run(replies)

    assert outcome.reason == "completed"


async def test_two_calls_taking_turns_with_the_same_results_are_stuck(run):
    outcome = await run(tool_loop("lookup", lambda i: {"topic": ["owls", "larks"][i % 2]}))

    assert outcome.reason == "no_progress"
    assert outcome.finished["tool_calls"] == 6
    assert (
        "the same 2 calls (lookup(owls), lookup(larks)) 3 times over"
        in outcome.notices()[-1]["text"]
    )


async def test_the_same_call_with_new_results_each_time_is_progress(run):
    polled = itertools.count()

    def job_status() -> str:
        """How far the job has got."""
        return f"{next(polled)} of 100 rows done"

    tools = ToolRegistry([Tool.from_function(job_status, inline=True)])
    outcome = await run(tool_loop("job_status", lambda i: {}), tools=tools, max_iterations=6)

    assert outcome.reason == "max_iterations"
