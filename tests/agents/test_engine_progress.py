"""Being stuck: the same action repeated, and tool errors in a row."""

from __future__ import annotations

from agents.testing.scripted import Call, Reply, tool_loop


async def test_the_same_action_three_times_in_a_row_ends_with_no_progress(run):
    outcome = await run(tool_loop("lookup", lambda i: {"topic": "owls"}))

    assert outcome.reason == "no_progress"
    assert outcome.finished["tool_calls"] == 3
    assert outcome.result.final_text.startswith(
        "Stopped: I repeated the same step without making progress."
    )
    assert outcome.finished["failure_class"] == "deterministic"


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


async def test_no_progress_repeats_is_configurable(run):
    outcome = await run(tool_loop("lookup", lambda i: {"topic": "owls"}), no_progress_repeats=5)

    assert outcome.reason == "no_progress"
    assert outcome.finished["tool_calls"] == 5


async def test_consecutive_tool_errors_end_the_run(run):
    outcome = await run(tool_loop("broken", lambda i: {"topic": f"t{i}"}))

    assert outcome.reason == "tool_errors"
    assert outcome.finished["tool_calls"] == 3
    assert outcome.result.final_text.startswith("Stopped: my tool calls kept failing.")


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
