"""What a run works with and what a tool may know of it (agents/run/deps.py), apart
from the loop: a tool's context reads the run's headroom and spends on its behalf."""

from __future__ import annotations

import subprocess
import sys

from agents.run.deps import ToolContext
from agents.state import Usage

from .step_run import ready_run


def test_tools_take_the_runs_dependencies_without_loading_the_loop():
    code = "import sys, agents.run.deps; print('agents.loop' in sys.modules)"

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


async def test_what_a_tool_spends_counts_against_the_runs_headroom():
    step = ready_run(token_budget=10_000, max_cost_usd=1.0)
    context = ToolContext(step.run, "c1")
    before = context.headroom()

    context.spend(Usage(prompt_tokens=1_500, completion_tokens=500, cost_usd=0.25))

    after = context.headroom()
    assert before.tokens - after.tokens == 2_000
    assert round(before.cost_usd - after.cost_usd, 6) == 0.25
    assert 0 < after.seconds <= before.seconds
    assert (context.run_id, context.call_id) == (step.state.run_id, "c1")


async def test_a_tools_event_is_numbered_with_the_runs_own():
    step = ready_run()
    await step.run.emit("run.started")

    await ToolContext(step.run, "c1").emit("tool.progress", id="c1", progress=0.5)

    started, progress = step.events.events
    assert progress["seq"] == started["seq"] + 1
    assert (progress["type"], progress["progress"]) == ("tool.progress", 0.5)
