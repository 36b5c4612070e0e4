"""What a decision tree answers, and the answers it gives (SPEC 3-6).

Before every iteration the loop asks a tree whether to go on; the answer is a
value, `Continue`, `Pause(reason)` or `Stop(reason)`, never a flag written on the
state. `DecisionTree` is the protocol every tree follows, the default one and the
skills' own alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agents.config import AgentConfig
from agents.state import AgentState, LimitHit, TerminationReason
from agents.tools import ToolResult


@dataclass(frozen=True)
class Continue:
    """Make another model call."""


@dataclass(frozen=True)
class Stop:
    """End the run with `reason`; `hit` gives the figures of the limit that ended it."""

    reason: TerminationReason
    hit: LimitHit | None = None


@dataclass(frozen=True)
class Pause:
    """Save the run at a limit and wait for the user (the `pause` limit action)."""

    reason: TerminationReason
    hit: LimitHit


Decision = Continue | Stop | Pause
GO = Continue()


class DecisionTree(Protocol):
    """The control flow of a run, pluggable per skill (SPEC section 6)."""

    def should_continue(self, state: AgentState) -> Decision:
        """Whether to make another model call: it decides, and changes nothing."""
        ...

    def on_turn_start(self, state: AgentState) -> AgentState:
        """Prepare the next call: warnings, hints, wind-down, the call's headroom."""
        ...

    def on_tool_result(self, state: AgentState, result: ToolResult) -> AgentState:
        """Take note of one tool result (progress, errors)."""
        ...

    def get_config(self) -> AgentConfig:
        """The limits this tree runs under."""
        ...
