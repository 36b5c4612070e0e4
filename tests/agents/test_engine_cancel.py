"""Stopping a run from outside: the user's cancel, during a stream or a tool."""

from __future__ import annotations

import asyncio
import time

from agents.cancel import CancelToken
from agents.testing.scripted import Call, Reply
from agents.tools import Tool, ToolRegistry


async def test_cancel_during_a_slow_stream_ends_the_run_quickly_keeping_the_text(run):
    cancel = CancelToken()

    async def cancel_soon() -> None:
        await asyncio.sleep(0.2)
        cancel.cancel()

    started = time.monotonic()
    stopper = asyncio.create_task(cancel_soon())
    outcome = await run([Reply(text=["Let me think"], hang=True, chunk_delay=0.05)], cancel=cancel)
    await stopper

    assert time.monotonic() - started < 1.0
    assert outcome.reason == "cancelled"
    assert outcome.result.final_text.startswith("Stopped: the run was cancelled.")
    assert "Let me think" in outcome.result.final_text
    assert outcome.model.closed_streams == 1
    assert outcome.finished["failure_class"] is None
    assert outcome.notices()[-1]["text"] == (
        "You stopped the run. Press Continue to let the Oracle go on from here."
    )
    assert outcome.notices()[-1]["severity"] == "info"


async def test_a_polled_check_cancels_a_running_tool(run):
    requested = False

    async def stuck() -> str:
        """Waits a long time."""
        nonlocal requested
        requested = True  # the worker's signal arrives while the tool runs
        await asyncio.sleep(30)
        return "late"

    cancel = CancelToken(check=lambda: requested, poll_interval=0.05)
    started = time.monotonic()
    outcome = await run(
        [Reply(calls=[Call("stuck")])],
        cancel=cancel,
        tools=ToolRegistry([Tool.from_function(stuck)]),
    )

    assert time.monotonic() - started < 1.0
    assert outcome.reason == "cancelled"
    (result,) = outcome.events.of_type("tool.result")
    assert result["ok"] is False


async def test_cancel_wins_over_completion_when_both_hold(run):
    cancel = CancelToken()
    cancel.cancel()

    outcome = await run([Reply(text="Done.")], cancel=cancel)

    assert outcome.reason == "cancelled"
    assert outcome.model.calls == []


async def test_a_cancel_during_a_quick_inline_tool_ends_the_run_before_the_next_model_call(run):
    cancel = CancelToken()

    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        cancel.cancel()  # the user presses Stop while the tool runs
        return a + b

    outcome = await run(
        [Reply(calls=[Call("add", {"a": 2, "b": 3})]), Reply(text="5.")],
        cancel=cancel,
        tools=ToolRegistry([Tool.from_function(add, inline=True)]),
    )

    assert outcome.reason == "cancelled"
    assert len(outcome.model.calls) == 1  # no model call after the stop
    (result,) = outcome.events.of_type("tool.result")
    assert result["ok"] is True and result["content"] == "5"  # the tool's work is kept
    assert outcome.result.state.messages[-1] == {
        "role": "tool",
        "tool_call_id": result["id"],
        "content": "5",
    }
