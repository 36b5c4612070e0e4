"""What a run works with (model, tree, tools, clock), and what a tool may know of the run
calling it.

Kept apart from the loop, so that tools (the `delegate` tool, MCP tools) and the
Django side can take these without importing the loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.attachments import Picture
from agents.clock import Clock
from agents.context.window import ContextWindow
from agents.instructions import instructions_in
from agents.model import Model
from agents.state import AgentState, Usage
from agents.tools import ToolRegistry
from agents.tree import DecisionTree


@dataclass(frozen=True)
class RunDeps:
    """What a run works with; kept apart from the run's state. `pictures`: the images
    the user's messages attached, by document id, for a model that sees images (the
    state keeps the messages' text alone; each call puts the images beside it); `window`:
    the model's context window, when known."""

    model: Model
    tree: DecisionTree
    tools: ToolRegistry = field(default_factory=ToolRegistry)
    clock: Clock = field(default_factory=Clock)
    pictures: Mapping[int, Picture] = field(default_factory=dict)
    # The model's context window when known (None: unknown, or none to manage, as for
    # the offline model); a refusal for length teaches the run one (`agents.context`).
    window: ContextWindow | None = None
    max_retries: int = 3
    retry_base_delay: float = 0.5


@dataclass(frozen=True)
class Headroom:
    """What the run has left of its round's limits at this moment (a subagent gets a
    share of it)."""

    seconds: float
    tokens: int
    cost_usd: float


class CallingRun(Protocol):
    """What a tool's context reads of the run that calls the tool."""

    state: AgentState
    model: Model
    clock: Clock

    @property
    def window(self) -> ContextWindow | None: ...

    def headroom(self) -> Headroom: ...

    async def emit(self, event_type: str, **fields: Any) -> None: ...


class ToolContext:
    """What a tool may know of the run calling it, and do in it: the `delegate` tool
    reads the run's headroom, announces its subagent's steps and spends its usage."""

    def __init__(self, run: CallingRun, call_id: str) -> None:
        self._run = run
        self.call_id = call_id

    @property
    def run_id(self) -> str:
        return self._run.state.run_id

    @property
    def model(self) -> Model:
        return self._run.model

    @property
    def clock(self) -> Clock:
        return self._run.clock

    @property
    def window(self) -> ContextWindow | None:
        """The model's context window as the run knows it (learnt from a refusal too)."""
        return self._run.window

    @property
    def instructions(self) -> str:
        """The user's custom instructions the run works under ("" for none)."""
        return instructions_in(self._run.state.messages)

    def extension(self, namespace: str) -> dict[str, Any]:
        """The run's own JSON-ready area `namespace`, kept with its state (a pause, a
        resume and a Continue keep it): a tool's per-run bookkeeping."""
        return self._run.state.extension(namespace)

    def headroom(self) -> Headroom:
        """The round's time, tokens and cost left now."""
        return self._run.headroom()

    async def emit(self, event_type: str, **fields: Any) -> None:
        """An event in the run's stream (numbered with the run's own events)."""
        await self._run.emit(event_type, **fields)

    def spend(self, usage: Usage) -> None:
        """Count tokens and cost spent on the run's behalf toward its budgets."""
        self._run.state.add_child_usage(usage)


TOOL_CONTEXT: ContextVar[ToolContext | None] = ContextVar("oracle_tool_context", default=None)


def tool_context() -> ToolContext | None:
    """The run calling the tool that asks (None outside a run's tool call)."""
    return TOOL_CONTEXT.get()
