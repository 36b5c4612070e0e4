"""A made-up `delegate` step: a helper (subagent) of a seeded run, with its started and
finished events and the tool step's row that shows it."""

from __future__ import annotations

import random
import uuid
from datetime import datetime
from typing import Any

from agents.state import TerminationReason
from agents.subagents import SubagentEvent
from chat.models import Role
from dashboard.seeding_rows import Tables

R = TerminationReason
# The helpers' own reasons (weights) and limits (iterations, tokens, seconds).
SUBAGENT_REASONS = {R.COMPLETED: 85, R.MAX_ITERATIONS: 6, R.TIMEOUT: 4, R.NO_PROGRESS: 3,
                    R.TOKEN_BUDGET: 2}  # fmt: skip
SUBAGENT_LIMITS = {"researcher": (30, 100_000, 600), "summarizer": (5, 20_000, 120)}


def delegation(
    rng: random.Random,
    tables: Tables,
    conversation_id: uuid.UUID,
    run_id: uuid.UUID,
    seq: int,
    number: int,
    events: list[dict[str, Any]],
    at: datetime,
) -> None:
    """A `delegate` step, and its subagent's started and finished events."""
    agent_type = rng.choices(("researcher", "summarizer"), (7, 3))[0]
    max_iterations, token_budget, timeout = SUBAGENT_LIMITS[agent_type]
    reason = rng.choices(list(SUBAGENT_REASONS), list(SUBAGENT_REASONS.values()))[0]
    if reason is R.COMPLETED:
        iterations = min(max_iterations, 1 + int(rng.expovariate(4 / max_iterations)))
    elif reason is R.MAX_ITERATIONS:
        iterations = max_iterations
    else:
        iterations = rng.randint(1, max_iterations)
    tokens = token_budget if reason is R.TOKEN_BUDGET else iterations * rng.randint(800, 3_000)
    elapsed = timeout * 1000 if reason is R.TIMEOUT else iterations * rng.randint(600, 5_000)
    counters = {
        "iterations": iterations,
        "tool_calls": max(0, iterations - 1),
        "tokens": tokens,
        "cost_usd": round(tokens * 0.6e-6, 6),
        "elapsed_ms": elapsed,
    }
    call_id = f"call-{number + 1}"
    task = "Seeded task."
    started = {"call_id": call_id, "agent_type": agent_type, "task": task, "limits": {}}
    finished = {"call_id": call_id, "agent_type": agent_type, "reason": reason.value}
    events.append({"type": SubagentEvent.STARTED, **started})
    events.append({"type": SubagentEvent.FINISHED, **finished, "label": "", "counters": counters})
    subagent = {
        "agent_type": agent_type,
        "task": task,
        "limits": {},
        "reason": reason.value,
        "counters": counters,
        "steps": [],
        "status": "finished",
    }
    metadata = {
        "id": call_id,
        "name": "delegate",
        "arguments": {"agent_type": agent_type, "task": task},
        "ok": True,
        "status": "done",
        "subagent": subagent,
    }
    tables.messages.add(
        conversation_id, run_id, seq, Role.TOOL, "Seeded helper answer.", metadata, "", "",
        False, at,
    )  # fmt: skip
