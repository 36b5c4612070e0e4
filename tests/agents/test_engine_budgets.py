"""Token, cost and time budgets, before a call and while it streams."""

from __future__ import annotations

from agents.clock import Clock
from agents.testing.scripted import Call, Reply, tool_loop

LOOKUP_FOREVER = tool_loop("lookup", lambda i: {"topic": f"topic {i}"})


async def test_the_token_budget_stops_mid_response_after_the_chunk_in_flight(run):
    chunk = "word " * 200  # about 250 tokens a chunk
    outcome = await run(
        [Reply(text=[chunk] * 20, usage=(100, 5_000))],
        token_budget=1_000,
    )

    deltas = outcome.events.of_type("assistant.delta")
    assert 2 <= len(deltas) < 20
    assert outcome.reason == "token_budget"
    assert outcome.result.final_text.startswith("Stopped: reached the token budget")
    # What was streamed is kept in the final message.
    assert outcome.result.final_text.endswith((chunk * len(deltas)).strip())
    # ... and in the history, for a later Continue.
    assert outcome.result.state.messages[-1]["content"] == chunk * len(deltas)


async def test_a_token_warning_comes_at_the_token_warning_percent(run):
    outcome = await run(
        [
            Reply(calls=[Call("lookup", {"topic": "a"})], usage=(700, 150)),
            Reply(text="Done."),
        ],
        token_budget=4_000,
        token_warning_percent=20,
    )

    warning = outcome.notices()[0]
    assert warning["metric"] == "tokens"
    assert (warning["value"], warning["limit"]) == (850, 4_000)
    assert "Approaching the token budget (850 of 4,000 tokens)" in warning["text"]
    assert "850 of 4,000 tokens" in outcome.model.calls[1].messages[-1]["content"]


async def test_the_cost_check_stops_before_a_call_whose_estimate_would_pass_the_limit(run):
    # At $0.00004 a prompt token: the first call's prompt (system prompt, question, and 307
    # tokens of tool schemas) is estimated at $0.014 and costs $0.006; the second call's
    # (the first call's 160 tokens, the tool result, the schemas) is estimated at $0.019.
    outcome = await run(
        [
            Reply(calls=[Call("lookup", {"topic": "a"})], usage=(150, 10)),
            Reply(text="Never sent."),
        ],
        price=(0.00004, 0.0),
        max_cost_usd=0.02,
    )

    assert outcome.reason == "cost_budget"
    assert len(outcome.model.calls) == 1
    assert outcome.result.final_text.startswith(
        "Stopped: the next model call would pass the cost limit"
    )


async def test_the_cost_limit_stops_a_streaming_call(run):
    outcome = await run(
        [Reply(text=["x" * 400] * 50, usage=None)], price=(0.0, 0.0001), max_cost_usd=0.05
    )

    assert outcome.reason == "cost_budget"
    assert len(outcome.events.of_type("assistant.delta")) < 50
    assert outcome.finished["cost_usd"] >= 0.05


async def test_time_stops_the_run_between_iterations(run):
    clock = Clock()
    script = [Reply(calls=[Call("lookup", {"topic": str(i)})], advance_clock=50) for i in range(5)]

    outcome = await run(script, clock=clock, timeout_seconds=120)

    assert outcome.reason == "timeout"
    assert len(outcome.model.calls) == 3
    assert outcome.result.final_text.startswith("Stopped: reached the time limit")
    assert outcome.finished["elapsed_ms"] >= 120_000


async def test_time_stops_a_hanging_model_call_and_keeps_the_streamed_text(run):
    clock = Clock(rate=50)  # 10 seconds of run time pass in 0.2 s
    outcome = await run(
        [Reply(text=["Working on it"], hang=True, chunk_delay=1.0)],
        clock=clock,
        timeout_seconds=10,
    )

    assert outcome.reason == "timeout"
    assert "Working on it" in outcome.result.final_text
    assert outcome.model.closed_streams == 1


async def test_time_stops_a_hanging_tool(run):
    import asyncio

    from agents.tools import Tool, ToolRegistry

    async def wait_forever() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return "unreachable"

    clock = Clock(rate=50)
    outcome = await run(
        [Reply(calls=[Call("wait_forever")])],
        clock=clock,
        timeout_seconds=10,
        tools=ToolRegistry([Tool.from_function(wait_forever)]),
    )

    assert outcome.reason == "timeout"
    (result,) = outcome.events.of_type("tool.result")
    assert result["ok"] is False and "run stopped" in result["content"]
