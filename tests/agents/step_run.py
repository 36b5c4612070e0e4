"""A run ready for one step, as the loop leaves it before the step: for the tests of the
step modules (agents/run/), which drive a step through its own function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.cancel import CancelToken
from agents.clock import Clock
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import new_state
from agents.run.context import RunContext
from agents.run.deps import RunDeps
from agents.state import AgentState
from agents.testing.scripted import Script, ScriptedModel
from agents.tools import ToolRegistry
from agents.tree import DefaultDecisionTree

from .conftest import tool_set


@dataclass
class StepRun:
    """The run a step works on, what it emitted and what it handed to be saved."""

    run: RunContext
    events: EventCollector
    model: ScriptedModel
    saved: list[AgentState]

    @property
    def state(self) -> AgentState:
        return self.run.state

    def texts(self, event_type: str) -> list[str]:
        return [event["text"] for event in self.events.of_type(event_type)]


def ready_run(
    script: Script = (),
    *,
    tools: ToolRegistry | None = None,
    clock: Clock | None = None,
    cancel: CancelToken | None = None,
    price: tuple[float, float] = (0.0, 0.0),
    **config: Any,
) -> StepRun:
    """A run of `script` whose next step may start: the tree has set its call limits."""
    clock = clock or Clock()
    model = ScriptedModel(script, price_per_token=price, clock=clock)
    tree = DefaultDecisionTree(AgentConfig.from_raw(config), None)
    deps = RunDeps(model=model, tree=tree, tools=tools or tool_set(), clock=clock)
    events, saved = EventCollector(), []

    async def save(state: AgentState) -> None:
        saved.append(AgentState.from_json(state.to_json()))

    run = RunContext(new_state("What is the answer?"), deps, events, cancel, save)
    tree.on_turn_start(run.state)
    assert run.state.call_limits is not None
    run.deadline = clock.now() + run.state.call_limits.seconds
    return StepRun(run, events, model, saved)
