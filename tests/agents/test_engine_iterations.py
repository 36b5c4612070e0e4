"""The iteration limit: soft warning, wind-down inside the limit, the stop, the priority order."""

from __future__ import annotations

from agents.testing.scripted import Call, Reply, tool_loop

LOOKUP_FOREVER = tool_loop("lookup", lambda i: {"topic": f"topic {i}"})


async def test_it_stops_at_the_iteration_limit_after_a_wind_down_call_without_tools(run):
    outcome = await run(LOOKUP_FOREVER, max_iterations=5)

    assert outcome.reason == "max_iterations"
    assert outcome.finished["iterations"] == 5  # inside the limit, never past it
    offered = [call.tools for call in outcome.model.calls]
    assert offered[:4] == [["calculator", "current_time", "lookup", "broken"]] * 4
    assert offered[4] is None  # the last allowed call has no tools
    last_prompt = outcome.model.calls[4].messages[-1]
    assert last_prompt["role"] == "system" and "Summarise the work so far" in last_prompt["content"]
    assert outcome.result.final_text == (
        "Stopped: reached the iteration limit (5 of 5). Here is what I found so far:\n\n"
        "Summary: here is what the tools told me."
    )
    assert outcome.finished["failure_class"] == "deterministic"
    stop_notice = outcome.notices()[-1]
    assert stop_notice["severity"] == "warning"
    assert stop_notice["metric"] == "iterations"
    assert (stop_notice["value"], stop_notice["limit"]) == (5, 5)


async def test_with_the_defaults_the_warning_comes_at_least_two_iterations_before_the_limit(run):
    outcome = await run(LOOKUP_FOREVER)

    warning = outcome.notices()[0]
    assert warning["metric"] == "iterations"
    assert warning["text"] == (
        "Approaching the iteration limit (11 of 15). The Oracle has been asked to wrap up."
    )
    # The warning is emitted before call 12; the hard limit is at call 15.
    starts = [e["seq"] for e in outcome.events.of_type("assistant.message")]
    calls_before_warning = sum(1 for seq in starts if seq < warning["seq"])
    assert 15 - calls_before_warning >= 2
    # ... and the model got a hint in its next call.
    hints = [m for m in outcome.model.calls[11].messages if m["role"] == "system"]
    assert "11 of 15" in hints[-1]["content"]
    assert "wrapping up" in hints[-1]["content"]
    # Only once per run.
    assert [n["metric"] for n in outcome.notices()].count("iterations") == 2  # warning + stop


async def test_a_plain_answer_ends_the_run_as_completed(run):
    outcome = await run([Reply(calls=[Call("lookup", {"topic": "a"})]), Reply(text="Done.")])

    assert outcome.reason == "completed"
    assert outcome.finished["iterations"] == 2


async def test_a_limit_of_one_iteration_answers_in_one_call_without_tools(run):
    outcome = await run([Reply(text="Short answer.")], max_iterations=1)

    assert outcome.model.calls[0].tools is None
    assert outcome.reason == "max_iterations"
    assert "Short answer." in outcome.result.final_text


async def test_completion_wins_over_the_iteration_limit_when_both_hold(run):
    # Under `pause` there is no wind-down, so the 3rd call is a normal call at the limit.
    outcome = await run(
        [Reply(calls=[Call("lookup", {"topic": str(i)})]) for i in range(2)]
        + [Reply(text="All done.")],
        max_iterations=3,
        limit_action="pause",
    )

    assert outcome.reason == "completed"
    assert outcome.result.final_text == "All done."


async def test_the_iteration_limit_wins_over_the_token_budget_when_both_hold(run):
    outcome = await run(
        [Reply(calls=[Call("lookup", {"topic": str(i)})], usage=(300, 10)) for i in range(2)],
        max_iterations=2,
        limit_action="pause",
        token_budget=1_000,
    )

    assert outcome.result.state.total.tokens == 620
    assert outcome.reason == "max_iterations"  # the next call's estimate passes 1,000 as well
