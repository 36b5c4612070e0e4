"""The kinds of subagent the Oracle may delegate to, each with its own limits: the
per-agent-type table of the execution-limits seed (SPEC section 6), which operators
edit in the admin. Importable from `agents.subagents` too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.config import AgentConfig, LimitAction


@dataclass(frozen=True)
class AgentType:
    """One kind of subagent and its own limits (the operator's per-agent-type table).
    The figures keep AgentConfig's bounds; a subagent always stops at its limits."""

    name: str
    description: str
    max_iterations: int = 10
    timeout_seconds: int = 120
    token_budget: int = 20_000
    max_cost_usd: float = 0.50
    max_tool_calls: int = 10

    def config(self) -> AgentConfig:
        """Its limits as a validated AgentConfig (a ConfigError names a bad figure)."""
        return AgentConfig.from_raw(
            {
                "max_iterations": self.max_iterations,
                "timeout_seconds": self.timeout_seconds,
                "token_budget": self.token_budget,
                "max_cost_usd": self.max_cost_usd,
                "max_tool_calls_per_turn": self.max_tool_calls,
                "limit_action": LimitAction.STOP.value,
            }
        )

    def limits(self) -> dict[str, Any]:
        """Its figures as events and pages show them."""
        return {
            "max_iterations": self.max_iterations,
            "timeout_seconds": self.timeout_seconds,
            "token_budget": self.token_budget,
            "max_cost_usd": self.max_cost_usd,
            "max_tool_calls": self.max_tool_calls,
        }


# Adapted from the execution-limits seed's table to the Oracle's own helpers and to
# AgentConfig's bounds (time at most 600 s); operators change them in the admin.
DEFAULT_AGENT_TYPES = (
    AgentType(
        "researcher",
        "Searches and reads the documents and reports what it found, with sources.",
        max_iterations=30,
        timeout_seconds=600,
        token_budget=100_000,
        max_cost_usd=5.0,
        max_tool_calls=60,
    ),
    AgentType(
        "summarizer",
        "Condenses a text or a set of findings into a short summary.",
        max_iterations=5,
        timeout_seconds=120,
        token_budget=20_000,
        max_cost_usd=0.5,
        max_tool_calls=5,
    ),
)
