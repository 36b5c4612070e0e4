"""Per-iteration overhead of the agent loop with an instant in-process scripted model.

Run: `python bench/engine.py`. Each iteration is one model call asking for one
tool call (with new arguments, so it is progress) and the tool's result; the
model and the tool return at once, so what is measured is the loop itself.
Target: under 0.3 ms per iteration at 50 and at 200 iterations, flat with history.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.config import AgentConfig, LimitAction, OperatorLimits
from agents.events import discard_events
from agents.loop import RunDeps, start_run
from agents.testing.scripted import ScriptedModel, tool_loop
from agents.tools import Tool, ToolRegistry
from agents.tree import DefaultDecisionTree

REPEATS = 7


def echo(text: str) -> str:
    """Echo the text back.

    Args:
        text: Anything.
    """
    return text


async def one_run(iterations: int) -> float:
    """Seconds per iteration of one run of exactly `iterations` model calls."""
    config = AgentConfig(
        unlimited_iterations=True,
        limit_action=LimitAction.WARN,  # user limits only warn; the operator caps end the run
        token_budget=200_000,
        timeout_seconds=600,
    )
    operator = OperatorLimits(max_iterations=iterations, max_tool_calls=10_000)
    model = ScriptedModel(tool_loop("echo", lambda i: {"text": f"step {i}"}), record=False)
    deps = RunDeps(
        model=model,
        tree=DefaultDecisionTree(config, operator),
        tools=ToolRegistry([Tool.from_function(echo, inline=True)]),
    )
    started = time.perf_counter()
    result = await start_run("Benchmark", deps, on_event=discard_events)
    elapsed = time.perf_counter() - started
    assert result.state.total.iterations == iterations, result.state.termination_reason
    return elapsed / iterations


async def main() -> None:
    await one_run(20)  # warm up
    for iterations in (50, 200):
        samples = [await one_run(iterations) for _ in range(REPEATS)]
        print(
            f"{iterations:>4} iterations: {statistics.median(samples) * 1000:.3f} ms per iteration "
            f"(median of {REPEATS}, best {min(samples) * 1000:.3f} ms)"
        )


if __name__ == "__main__":
    asyncio.run(main())
