"""Soft warnings: always in time, once per round and quantity, and true to what follows."""

from __future__ import annotations

import asyncio

import pytest

from agents.clock import Clock
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, continue_run
from agents.testing.scripted import Call, Reply, tool_loop
from agents.tools import Tool, ToolRegistry
from agents.tree import DefaultDecisionTree
from agents.wording import WIND_DOWN_INSTRUCTION

LOOKUP_FOREVER = tool_loop("lookup", lambda i: {"topic": f"topic {i}"})


def iterations_warned_ahead(outcome) -> int:
    """How many model calls were still to come when the iteration warning was shown."""
    (warning,) = [
        n for n in outcome.notices() if n["metric"] == "iterations" and "Approaching" in n["text"]
    ]
    starts = [e["seq"] for e in outcome.events.of_type("run.started")]
    calls_before = sum(
        1 for e in outcome.events.of_type("assistant.message") if e["seq"] < warning["seq"]
    )
    assert starts
    return outcome.finished["iterations"] - calls_before


@pytest.mark.parametrize("limit", [3, 4, 5, 6, 10, 15, 30])
@pytest.mark.parametrize("percent", [50, 70, 100])
async def test_every_iteration_limit_of_three_or_more_is_warned_two_iterations_ahead(
    run, limit, percent
):
    outcome = await run(
        LOOKUP_FOREVER, max_iterations=limit, soft_warning_percent=percent,
        max_tool_calls_per_turn=100,
    )  # fmt: skip

    assert outcome.reason == "max_iterations"
    assert iterations_warned_ahead(outcome) >= 2


async def test_a_limit_of_two_is_warned_with_its_last_call_and_one_not_at_all(run):
    two = await run(LOOKUP_FOREVER, max_iterations=2)
    one = await run(LOOKUP_FOREVER, max_iterations=1)

    assert iterations_warned_ahead(two) == 1
    assert two.notices()[0]["text"].startswith("Approaching the iteration limit (1 of 2).")
    assert not [n for n in one.notices() if "Approaching" in n["text"]]


async def test_after_continue_the_warning_says_which_round_and_the_wrap_up_is_gone(run):
    outcome = await run(LOOKUP_FOREVER, max_iterations=5)
    state = outcome.result.state
    assert any(m["content"] == WIND_DOWN_INSTRUCTION for m in state.messages)
    tree = DefaultDecisionTree(AgentConfig.from_raw({"max_iterations": 5}))
    deps = RunDeps(model=outcome.model, tree=tree, tools=outcome.deps.tools)
    events = EventCollector()

    await continue_run(state, deps, on_event=events)

    warnings = [n["text"] for n in events.of_type("system.notice") if "Approaching" in n["text"]]
    assert warnings == [
        "Approaching the iteration limit of round 2 (3 of 5). The Oracle has been asked to wrap up."
    ]
    first_call_of_round_two = outcome.model.calls[5].messages
    assert WIND_DOWN_INSTRUCTION not in [m["content"] for m in first_call_of_round_two]
    assert "round 2 has begun" in first_call_of_round_two[-1]["content"]
    assert outcome.model.calls[5].tools is not None


async def test_with_extensions_left_the_warning_says_the_limit_will_be_raised(run):
    outcome = await run(
        LOOKUP_FOREVER, max_iterations=5, limit_action="extend", extend_multiplier=2,
        max_extensions=1, no_progress_repeats=10,
    )  # fmt: skip

    texts = [n["text"] for n in outcome.notices() if "Approaching" in n["text"]]
    assert texts[0] == (
        "Approaching the iteration limit (3 of 5). "
        "At the limit it will be raised to 10 (extension 1 of 1)."
    )
    hints = [m["content"] for m in outcome.model.calls[3].messages if m["role"] == "system"]
    assert not any("wrapping up" in hint for hint in hints)
    assert texts[1].startswith("Approaching the iteration limit (7 of 10). The Oracle has been")


async def test_the_time_warning_comes_while_a_long_answer_streams(run):
    # 80 seconds of answer pass in 0.8 s, in few steps: each real sleep overshoots a
    # little (more on a busy machine), and 200 of them once added up past the limit.
    clock = Clock(rate=100)
    outcome = await run(
        [Reply(text=["word "] * 16, chunk_delay=5)],
        clock=clock,
        timeout_seconds=120,
        soft_warning_percent=50,
    )

    assert outcome.reason == "completed"
    (warning,) = outcome.notices()
    assert warning["metric"] == "time" and (warning["value"], warning["limit"]) == (60, 120)
    assert warning["text"].startswith("Approaching the time limit (60 of 120 seconds).")
    deltas = outcome.events.of_type("assistant.delta")
    assert deltas[0]["seq"] < warning["seq"] < deltas[-1]["seq"]  # mid-stream


async def test_a_call_whose_estimate_jumps_past_the_token_warning_is_warned_before(run):
    big = "x" * 8_000  # a tool result of about 2,000 tokens
    outcome = await run(
        [
            Reply(calls=[Call("calculator", {"expression": "1+1"})], usage=(300, 20)),
            Reply(calls=[Call("lookup", {"topic": big})], usage=(400, 2_100)),
            Reply(text="Done.", usage=(2_600, 20)),
        ],
        token_budget=20_000,
        token_warning_percent=20,
    )

    (warning,) = [n for n in outcome.notices() if n["metric"] == "tokens"]
    before_third_call = [e["seq"] for e in outcome.events.of_type("assistant.message")][1]
    assert warning["seq"] > before_third_call  # shown before the call that crosses it
    assert warning["value"] < 4_000  # the spending so far, not the estimate


async def test_figures_are_exact_and_read_as_people_write_them(run):
    outcome = await run(
        [Reply(text=["x" * 400] * 50, usage=None)], price=(0.0, 0.0001), max_cost_usd=0.045
    )

    stop = outcome.notices()[-1]
    assert stop["metric"] == "cost" and stop["limit"] == 0.045
    assert "of $0.045)" in stop["text"]
    time_limit = [n for n in outcome.notices() if n["metric"] == "cost"]
    assert all(isinstance(n["limit"], float) for n in time_limit)


@pytest.mark.parametrize(
    ("metric", "value", "text"),
    [
        ("iterations", 15.0, "15"),
        ("tokens", 40100.0, "40,100"),
        ("time", 10.0069, "10"),
        ("time", 10.34, "10.3"),
        ("time", 120.0, "120"),
        ("cost", 0.045, "$0.045"),
        ("cost", 0.05, "$0.05"),
        ("cost", 1.0, "$1.00"),
        ("cost", 0.0123456789, "$0.012346"),
    ],
)
def test_numbers(metric, value, text):
    from agents.wording import number

    assert number(metric, value) == text


async def test_the_time_warning_comes_while_a_slow_tool_runs(run):
    async def crunch(rows: int) -> str:
        """Crunch some rows, slowly.

        Args:
            rows: How many.
        """
        await asyncio.sleep(0.8)  # 80 seconds of the run's clock
        return f"{rows} rows crunched"

    tools = ToolRegistry([Tool.from_function(crunch)])
    outcome = await run(
        [Reply(calls=[Call("crunch", {"rows": 10})]), Reply(text="Done.")],
        tools=tools, clock=Clock(rate=100), timeout_seconds=120, soft_warning_percent=50,
    )  # fmt: skip

    assert outcome.reason == "completed"
    (warning,) = outcome.notices()
    (call,) = outcome.events.of_type("tool.call")
    (result,) = outcome.events.of_type("tool.result")
    assert call["seq"] < warning["seq"] < result["seq"]  # while the tool ran
    assert warning["text"].startswith("Approaching the time limit (60 of 120 seconds).")
