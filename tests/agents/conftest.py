"""Helpers for the engine tests: run a scripted model through the real loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from agents.builtin_tools import calculator, current_time
from agents.cancel import CancelToken
from agents.clock import Clock
from agents.config import AgentConfig, OperatorLimits
from agents.events import EventCollector
from agents.loop import RunDeps, RunResult, start_run
from agents.testing.scripted import Script, ScriptedModel
from agents.tools import Tool, ToolError, ToolRegistry
from agents.tree import DefaultDecisionTree


def lookup(topic: str) -> str:
    """Look a topic up in the test encyclopedia.

    Args:
        topic: What to look up.
    """
    return f"Notes about {topic}."


def broken(topic: str) -> str:
    """A tool that always fails.

    Args:
        topic: Anything.
    """
    raise ToolError(f"cannot look up {topic}")


def tool_set() -> ToolRegistry:
    return ToolRegistry(
        [
            Tool.from_function(calculator, inline=True),
            Tool.from_function(current_time, inline=True),
            Tool.from_function(lookup),
            Tool.from_function(broken),
        ]
    )


@dataclass
class Outcome:
    """A finished (or paused) scripted run and everything it emitted."""

    result: RunResult
    events: EventCollector
    model: ScriptedModel
    deps: RunDeps

    @property
    def reason(self) -> str | None:
        reason = self.result.reason
        return reason.value if reason else None

    @property
    def finished(self) -> dict[str, Any]:
        (event,) = self.events.of_type("run.finished")
        return event

    def notices(self) -> list[dict[str, Any]]:
        return self.events.of_type("system.notice")


async def run_script(
    script: Script,
    *,
    question: str = "What is the answer?",
    tools: ToolRegistry | None = None,
    clock: Clock | None = None,
    price: tuple[float, float] = (0.0, 0.0),
    cancel: CancelToken | None = None,
    operator: OperatorLimits | None = None,
    **config: Any,
) -> Outcome:
    clock = clock or Clock()
    model = ScriptedModel(script, price_per_token=price, clock=clock)
    tree = DefaultDecisionTree(AgentConfig.from_raw(config), operator)
    deps = RunDeps(model=model, tree=tree, tools=tools or tool_set(), clock=clock)
    events = EventCollector()
    result = await start_run(question, deps, on_event=events, cancel=cancel)
    return Outcome(result, events, model, deps)


@pytest.fixture
def run() -> Any:
    return run_script
