"""One made-up finished run, as the engine would have left it: its reason (weighted by
skill), counters, limit hit, pauses and extensions, its model's context window, its
messages and events."""

from __future__ import annotations

import functools
import json
import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agents.config import AgentConfig, LimitAction, OperatorLimits
from agents.endings import ending_events
from agents.events import EventType
from agents.progress import Action, Stuck
from agents.skills import skill_named
from agents.state import FailureClass, LimitHit, Metric, TerminationReason
from chat.models import Role, RunStatus
from chat.notices import notice_metadata
from dashboard.seeding_context import SeededModel, context_events, overflow
from dashboard.seeding_delegation import delegation
from dashboard.seeding_rows import Seeded, Tables

R = TerminationReason
# How often each reason ends a run of each skill (weights).
REASON_WEIGHTS: dict[str, dict[TerminationReason, float]] = {
    "default": {
        R.COMPLETED: 80, R.MAX_ITERATIONS: 5, R.TIMEOUT: 2.5, R.NO_PROGRESS: 4,
        R.TOKEN_BUDGET: 2, R.COST_BUDGET: 0.5, R.TOOL_BUDGET: 1, R.TOOL_ERRORS: 1,
        R.CANCELLED: 3, R.PROVIDER_ERROR: 0.7, R.INTERRUPTED: 0.1,
        R.TOOL_BUDGET_VIOLATION: 0.2, R.CONTEXT_WINDOW: 0.5,
    },
    "deep_research": {
        R.COMPLETED: 70, R.MAX_ITERATIONS: 9, R.TIMEOUT: 5, R.NO_PROGRESS: 5,
        R.TOKEN_BUDGET: 4, R.COST_BUDGET: 1, R.TOOL_BUDGET: 1.5, R.TOOL_ERRORS: 1,
        R.CANCELLED: 2.5, R.PROVIDER_ERROR: 0.8, R.INTERRUPTED: 0.1,
        R.TOOL_BUDGET_VIOLATION: 0.1, R.CONTEXT_WINDOW: 1.0,
    },
    "quick_answer": {
        R.COMPLETED: 88, R.MAX_ITERATIONS: 6, R.TOOL_BUDGET: 2, R.NO_PROGRESS: 1,
        R.CANCELLED: 2, R.PROVIDER_ERROR: 0.8, R.TIMEOUT: 0.2,
    },
}  # fmt: skip
# Limits a `pause` user's run pauses at (then Continue, or Stop ends it with the reason).
PAUSING = frozenset({R.MAX_ITERATIONS, R.TOKEN_BUDGET, R.TIMEOUT, R.COST_BUDGET, R.TOOL_BUDGET})
# Share of runs that hand work to a helper, by skill.
DELEGATING = {"default": 0.06, "deep_research": 0.4, "quick_answer": 0.0}
# The loops runs get stuck in: one call over and over, or calls taking turns.
STUCK_CALLS = (
    [("search_documents", {"query": "quarterly revenue 2023"})],
    [("search_documents", {"query": "owl migration routes"})],
    [("read_document", {"doc_id": "doc-12", "offset": 0})],
    [("calculator", {"expression": "1/0"})],
    [("current_time", {"city": "Atlantis"})],
    [("search_documents", {"query": "pricing"}), ("read_document", {"doc_id": "doc-3"})],
    [("search_documents", {"query": "onboarding checklist"})],
    [("read_document", {"doc_id": "doc-7", "offset": 4000})],
    [("calculator", {"expression": "sqrt(-1)"})],
    [("search_documents", {"query": "refund policy"}), ("search_documents", {"query": "refunds"})],
)
STUCK_WEIGHTS = (30, 22, 15, 10, 6, 5, 4, 3, 3, 2)


@dataclass(frozen=True)
class Profile:
    """What a user's runs share: the limit action, their model and its price."""

    action: LimitAction
    price: float  # dollars per token
    model: SeededModel


@functools.cache
def _config(skill: str, action: LimitAction) -> tuple[AgentConfig, dict[str, Any]]:
    config = skill_named(skill).config(AgentConfig(limit_action=action), OperatorLimits())
    return config, config.to_dict()


def add_run(
    rng: random.Random,
    tables: Tables,
    conversation_id: uuid.UUID,
    skill: str,
    profile: Profile,
    created: datetime,
    seq: int,
    seeded: Seeded,
) -> int:
    """Add one run and its messages and events; the conversation's last message seq."""
    config, config_dict = _config(skill, profile.action)
    weights = REASON_WEIGHTS[skill]
    reason = rng.choices(list(weights), list(weights.values()))[0]
    action = profile.action
    ceiling = config.max_iterations
    if reason is R.MAX_ITERATIONS and action is LimitAction.EXTEND:
        reason = R.TURN_BUDGET_EXHAUSTED
        ceiling = min(ceiling * config.extend_multiplier, 50)
    counters, hit = _counters(rng, reason, config, ceiling, profile.price)
    run_id = uuid.uuid4()
    events: list[dict[str, Any]] = [
        {
            "type": EventType.RUN_STARTED,
            "run_id": str(run_id),
            "model": profile.model.name,
            "config": config_dict,
        }
    ]
    if reason is R.CONTEXT_WINDOW:
        hit = overflow(rng, profile.model)
    if action is LimitAction.WARN and reason is R.MAX_ITERATIONS:
        # Warn goes on past the limit (to the operator's cap, which these runs never reach).
        reason, hit = R.COMPLETED, None
        counters["iterations"] = ceiling + rng.randint(1, 6)
    elif action is LimitAction.PAUSE and reason in PAUSING:
        events.append({"type": EventType.RUN_PAUSED, "reason": reason.value})
        if rng.random() < 0.5:  # Continue, and the next round completes
            events.append({"type": EventType.RUN_RESUMED})
            reason, hit = R.COMPLETED, None
    elif action is LimitAction.EXTEND and reason is R.TURN_BUDGET_EXHAUSTED:
        new = min(config.max_iterations * config.extend_multiplier, 50)
        events.append({"type": EventType.BUDGET_EXTENDED, "from": config.max_iterations, "to": new})
    elif action is LimitAction.EXTEND and reason is R.COMPLETED and rng.random() < 0.05:
        new = min(config.max_iterations * config.extend_multiplier, 50)
        events.append({"type": EventType.BUDGET_EXTENDED, "from": config.max_iterations, "to": new})
        counters["iterations"] = rng.randint(config.max_iterations + 1, new)
    failure_class = _failure_class(reason)
    seq += 1
    tables.messages.add(
        conversation_id, run_id, seq, Role.USER, "Seeded question.", {}, "", "", False, created
    )
    model = profile.model
    seq = context_events(rng, tables, model, conversation_id, run_id, seq, events, created)
    if rng.random() < DELEGATING[skill]:
        for number in range(rng.choice((1, 1, 1, 2))):
            seq += 1
            delegation(rng, tables, conversation_id, run_id, seq, number, events, created)
    finished = created + timedelta(milliseconds=counters["elapsed_ms"] + 300)
    ending = ending_events(
        reason,
        hit=hit,
        final_text="Seeded answer.",
        counters=counters,
        failure_class=FailureClass(failure_class) if failure_class else None,
    )
    for event in ending:
        events.append(dict(event))
        seq += 1
        if event["type"] == EventType.ASSISTANT_MESSAGE:
            metadata = {"final": True, "tool_calls": [], "usage": counters}
            tables.messages.add(conversation_id, run_id, seq, Role.ASSISTANT, event["text"],
                                metadata, reason.value, failure_class, False, finished)  # fmt: skip
        elif event["type"] == EventType.SYSTEM_NOTICE:
            tables.messages.add(conversation_id, run_id, seq, Role.SYSTEM, event["text"],
                                notice_metadata(event), "", "", False, finished)  # fmt: skip
        else:
            seq -= 1  # run.finished has no row of its own
    step = timedelta(milliseconds=counters["elapsed_ms"] / len(events))
    for number, event in enumerate(events, start=1):
        moment = min(created + step * number, finished)
        tables.events.add(run_id, number, event["type"], {**event, "seq": number}, moment)
    tables.runs.add(
        run_id, conversation_id, RunStatus.FINISHED, "", reason.value, failure_class,
        counters["iterations"], counters["tool_calls"], counters["tokens"],
        counters["cost_usd"], counters["elapsed_ms"], len(events), created,
        created + timedelta(milliseconds=150), finished, 1, 0, action.value,
    )  # fmt: skip
    seeded.runs += 1
    seeded.reasons[reason.value] = seeded.reasons.get(reason.value, 0) + 1
    return seq


def _counters(
    rng: random.Random, reason: TerminationReason, config: AgentConfig, limit: int, price: float
) -> tuple[dict[str, Any], LimitHit | None]:
    """A run's counters as its reason makes them likely, and the limit it hit."""
    if reason in (R.MAX_ITERATIONS, R.TURN_BUDGET_EXHAUSTED):
        iterations = limit
    elif reason is R.COMPLETED:
        typical = {3: 1.0, 15: 2.5}.get(config.max_iterations, 6.0)
        iterations = min(limit, 1 + int(rng.expovariate(1 / typical)))
    else:
        iterations = rng.randint(1, max(1, limit - 1))
    tool_calls = max(0, iterations - 1 + rng.randint(0, 2))
    tokens = iterations * rng.randint(900, 4_200)
    elapsed_ms = iterations * rng.randint(700, 6_500)
    hit: LimitHit | None = None
    if reason is R.TOKEN_BUDGET:
        tokens = config.token_budget + rng.randint(0, 3_000)
        hit = LimitHit(Metric.TOKENS, tokens, config.token_budget)
    elif reason is R.TIMEOUT:
        elapsed_ms = config.timeout_seconds * 1000 + rng.randint(0, 900)
        hit = LimitHit(Metric.TIME, elapsed_ms / 1000, config.timeout_seconds)
    elif reason in (R.TOOL_BUDGET, R.TOOL_BUDGET_VIOLATION):
        tool_calls = config.max_tool_calls_per_turn
        hit = LimitHit(Metric.TOOL_CALLS, tool_calls, tool_calls)
    elif reason in (R.MAX_ITERATIONS, R.TURN_BUDGET_EXHAUSTED):
        hit = LimitHit(Metric.ITERATIONS, iterations, limit)
    elif reason is R.NO_PROGRESS:
        hit = LimitHit(Metric.REPEATS, 3, 3, pattern=_stuck(rng))
    elif reason is R.TOOL_ERRORS:
        hit = LimitHit(Metric.TOOL_ERRORS, 3, 3)
    elif reason is R.PROVIDER_ERROR:
        hit = LimitHit(Metric.ATTEMPTS, 3, 3)
    cost = round(tokens * price, 6)
    if reason is R.COST_BUDGET:
        cost = round(config.max_cost_usd + rng.uniform(0, 0.05), 6)
        hit = LimitHit(Metric.COST, cost, config.max_cost_usd)
    counters = {
        "iterations": iterations,
        "tool_calls": tool_calls,
        "tokens": tokens,
        "cost_usd": cost,
        "elapsed_ms": elapsed_ms,
    }
    return counters, hit


@functools.cache
def _stuck_text(index: int) -> str:
    actions = tuple(
        Action(name, json.dumps(arguments, sort_keys=True, separators=(",", ":")), "ok:0")
        for name, arguments in STUCK_CALLS[index]
    )
    return Stuck(len(actions), 3, actions).describe()


def _stuck(rng: random.Random) -> str:
    return _stuck_text(rng.choices(range(len(STUCK_CALLS)), STUCK_WEIGHTS)[0])


def _failure_class(reason: TerminationReason) -> str:
    if reason in (R.COMPLETED, R.CANCELLED):
        return ""
    if reason in (R.PROVIDER_ERROR, R.INTERRUPTED):
        return FailureClass.TRANSIENT_INFRA.value
    return FailureClass.DETERMINISTIC.value
