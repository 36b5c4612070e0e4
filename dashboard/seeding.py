"""A database of made-up finished runs for measuring the dashboard (`manage.py seed_runs N`).

The runs look like the engine's own: each has its user message, its final answer and,
when it did not complete, the System notice and `run.finished` event `agents.endings`
writes; a `run.started` event with the config it ran under; pauses and extensions for
users whose limit action pauses or extends; `delegate` steps with their subagents'
events. They are spread over users (a few heavy ones), skills, reasons, limit actions
and the days of the period, with more runs by day than by night. No real text.

Rows go in as plain tuples, one `executemany` per table and batch (`COPY` on PostgreSQL,
whose driver sends an `executemany` a row at a time here): building 600,000 model
instances took most of a minute for 100,000 runs.
"""

from __future__ import annotations

import functools
import json
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, models, transaction
from django.utils import timezone

from agents.config import AgentConfig, LimitAction, OperatorLimits
from agents.endings import ending_events
from agents.events import EventType
from agents.progress import Action, Stuck
from agents.skills import skill_named
from agents.state import FailureClass, LimitHit, Metric, TerminationReason
from agents.subagents import SubagentEvent
from chat.models import Conversation, Message, Role, Run, RunEvent, RunStatus
from chat.recorder import notice_metadata

USERNAME_PREFIX = "seed-user-"
BATCH = 5_000
R = TerminationReason

# How often each reason ends a run of each skill (weights).
REASON_WEIGHTS: dict[str, dict[TerminationReason, float]] = {
    "default": {
        R.COMPLETED: 80, R.MAX_ITERATIONS: 5, R.TIMEOUT: 2.5, R.NO_PROGRESS: 4,
        R.TOKEN_BUDGET: 2, R.COST_BUDGET: 0.5, R.TOOL_BUDGET: 1, R.TOOL_ERRORS: 1,
        R.CANCELLED: 3, R.PROVIDER_ERROR: 0.7, R.INTERRUPTED: 0.1,
        R.TOOL_BUDGET_VIOLATION: 0.2,
    },
    "deep_research": {
        R.COMPLETED: 70, R.MAX_ITERATIONS: 9, R.TIMEOUT: 5, R.NO_PROGRESS: 5,
        R.TOKEN_BUDGET: 4, R.COST_BUDGET: 1, R.TOOL_BUDGET: 1.5, R.TOOL_ERRORS: 1,
        R.CANCELLED: 2.5, R.PROVIDER_ERROR: 0.8, R.INTERRUPTED: 0.1,
        R.TOOL_BUDGET_VIOLATION: 0.1,
    },
    "quick_answer": {
        R.COMPLETED: 88, R.MAX_ITERATIONS: 6, R.TOOL_BUDGET: 2, R.NO_PROGRESS: 1,
        R.CANCELLED: 2, R.PROVIDER_ERROR: 0.8, R.TIMEOUT: 0.2,
    },
}  # fmt: skip
SKILL_WEIGHTS = {"default": 60, "deep_research": 25, "quick_answer": 15}
ACTION_WEIGHTS = {LimitAction.STOP: 70, LimitAction.PAUSE: 10, LimitAction.EXTEND: 10,
                  LimitAction.WARN: 10}  # fmt: skip
# Limits a `pause` user's run pauses at (then Continue, or Stop ends it with the reason).
PAUSING = frozenset({R.MAX_ITERATIONS, R.TOKEN_BUDGET, R.TIMEOUT, R.COST_BUDGET, R.TOOL_BUDGET})
# Share of runs that hand work to a helper, by skill; the helpers' own reasons and limits.
DELEGATING = {"default": 0.06, "deep_research": 0.4, "quick_answer": 0.0}
SUBAGENT_REASONS = {R.COMPLETED: 85, R.MAX_ITERATIONS: 6, R.TIMEOUT: 4, R.NO_PROGRESS: 3,
                    R.TOKEN_BUDGET: 2}  # fmt: skip
SUBAGENT_LIMITS = {"researcher": (30, 100_000, 600), "summarizer": (5, 20_000, 120)}
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
PRICES = (0.15e-6, 0.6e-6, 2.5e-6, 10e-6)  # dollars per token of the users' models
PRICE_WEIGHTS = (30, 40, 25, 5)


@dataclass
class Seeded:
    """What `seed_runs` added."""

    users: int = 0
    conversations: int = 0
    runs: int = 0
    messages: int = 0
    events: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


class _Table:
    """Rows of one model waiting for an `executemany`, each value prepared once for the
    database (only the columns that need it: ids, times, JSON)."""

    def __init__(self, model: type[models.Model], names: Sequence[str]) -> None:
        fields = [_column(model, name) for name in names]
        quote = connection.ops.quote_name
        columns = ", ".join(quote(column) for _, column in fields)
        marks = ", ".join(["%s"] * len(fields))
        self.sql = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({marks})"
        self.copy = f"COPY {quote(model._meta.db_table)} ({columns}) FROM STDIN"
        self.prepare = [_preparer(each) for each, _ in fields]
        self.rows: list[tuple[Any, ...]] = []

    def add(self, *values: Any) -> None:
        self.rows.append(values)

    def flush(self) -> int:
        prepared = [
            [prepare(value) for prepare, value in zip(self.prepare, row, strict=True)]
            for row in self.rows
        ]
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":  # one row at a time otherwise: COPY
                with cursor.cursor.copy(self.copy) as copy:
                    for row in prepared:
                        copy.write_row(row)
            else:
                for start in range(0, len(prepared), BATCH):
                    cursor.executemany(self.sql, prepared[start : start + BATCH])
        written = len(self.rows)
        self.rows.clear()
        return written


def _column(model: type[models.Model], name: str) -> tuple[models.Field[Any, Any], str]:
    each = model._meta.get_field(name)
    if not isinstance(each, models.Field) or each.column is None:
        raise ValueError(f"{model.__name__}.{name} has no column")
    return each, each.column


def _preparer(each: models.Field[Any, Any]) -> Callable[[Any], Any]:
    plain = (models.IntegerField, models.CharField, models.TextField, models.FloatField,
             models.BooleanField)  # fmt: skip
    if isinstance(each, plain) and not isinstance(each, models.ForeignKey):
        return lambda value: value
    return functools.partial(_prepared, each)


def _prepared(each: models.Field[Any, Any], value: Any) -> Any:
    return None if value is None else each.get_db_prep_save(value, connection)


@dataclass
class _Tables:
    conversations: _Table = field(
        default_factory=lambda: _Table(
            Conversation,
            ("id", "owner", "title", "skill", "model", "last_message_seq", "created_at",
             "updated_at", "allowed_tools"),
        )
    )  # fmt: skip
    runs: _Table = field(
        default_factory=lambda: _Table(
            Run,
            ("id", "conversation", "status", "pending_action", "reason", "failure_class",
             "iterations", "tool_calls", "tokens", "cost_usd", "elapsed_ms", "last_event_seq",
             "created_at", "started_at", "finished_at", "lease", "auto_resumes",
             "limit_action"),
        )
    )  # fmt: skip
    messages: _Table = field(
        default_factory=lambda: _Table(
            Message,
            ("conversation", "run", "seq", "role", "content", "metadata", "termination_reason",
             "failure_class", "superseded", "created_at"),
        )
    )  # fmt: skip
    events: _Table = field(
        default_factory=lambda: _Table(RunEvent, ("run", "seq", "type", "data", "created_at"))
    )

    def flush(self, seeded: Seeded) -> None:
        self.conversations.flush()  # in this order: each refers to the ones before it
        self.runs.flush()
        seeded.messages += self.messages.flush()
        seeded.events += self.events.flush()


@dataclass(frozen=True)
class _Profile:
    """What a user's runs share: the limit action and the price of their model."""

    action: LimitAction
    price: float  # dollars per token


def seed_runs(count: int, *, days: int = 30, seed: int = 1, now: datetime | None = None) -> Seeded:
    """Add `count` finished runs spread over the last `days` days (users made as needed)."""
    rng = random.Random(seed)
    now = now or timezone.now()
    users = _users(max(10, count // 400))
    seeded = Seeded(users=len(users))
    profiles = [
        _Profile(
            rng.choices(list(ACTION_WEIGHTS), list(ACTION_WEIGHTS.values()))[0],
            rng.choices(PRICES, PRICE_WEIGHTS)[0],
        )
        for _ in users
    ]
    # A few users run most of the runs.
    cumulative = list(_accumulate([rng.paretovariate(1.3) for _ in users]))
    tables = _Tables()
    made = 0
    with transaction.atomic():
        while made < count:
            index = rng.choices(range(len(users)), cum_weights=cumulative)[0]
            size = min(count - made, rng.choice((1, 1, 1, 2, 2, 3, 4, 6, 9)))
            start = _when(rng, now, days)
            _conversation(rng, tables, users[index].pk, profiles[index], size, start, now, seeded)
            made += size
            if len(tables.events.rows) >= BATCH * 4:
                tables.flush(seeded)
        tables.flush(seeded)
    return seeded


def _accumulate(values: Sequence[float]) -> list[float]:
    total, out = 0.0, []
    for value in values:
        total += value
        out.append(total)
    return out


def _users(wanted: int) -> list[User]:
    names = [f"{USERNAME_PREFIX}{number:04d}" for number in range(1, wanted + 1)]
    existing = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    User.objects.bulk_create(
        User(username=name, password="!seeded")  # an unusable password: nobody logs in
        for name in names
        if name not in existing
    )
    return list(User.objects.filter(username__in=names).order_by("username"))


def _when(rng: random.Random, now: datetime, days: int) -> datetime:
    """A moment in the last `days` days, three times likelier by day than by night."""
    while True:
        moment = now - timedelta(seconds=rng.uniform(0, days * 86_400))
        if 8 <= moment.hour < 20 or rng.random() < 1 / 3:
            return moment


def _conversation(
    rng: random.Random,
    tables: _Tables,
    owner_id: int,
    profile: _Profile,
    runs: int,
    start: datetime,
    now: datetime,
    seeded: Seeded,
) -> None:
    skill = rng.choices(list(SKILL_WEIGHTS), list(SKILL_WEIGHTS.values()))[0]
    conversation_id = uuid.uuid4()
    moment, seq = start, 0
    for _ in range(runs):
        moment = min(moment + timedelta(seconds=rng.uniform(20, 900)), now)
        seq = _run(rng, tables, conversation_id, skill, profile, moment, seq, seeded)
    tables.conversations.add(
        conversation_id, owner_id, "Seeded conversation", skill, "", seq, start, moment, []
    )
    seeded.conversations += 1


@functools.cache
def _config(skill: str, action: LimitAction) -> tuple[AgentConfig, dict[str, Any]]:
    config = skill_named(skill).config(AgentConfig(limit_action=action), OperatorLimits())
    return config, config.to_dict()


def _run(
    rng: random.Random,
    tables: _Tables,
    conversation_id: uuid.UUID,
    skill: str,
    profile: _Profile,
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
        {"type": EventType.RUN_STARTED, "run_id": str(run_id), "model": "", "config": config_dict}
    ]
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
    if rng.random() < DELEGATING[skill]:
        for number in range(rng.choice((1, 1, 1, 2))):
            seq += 1
            _delegation(rng, tables, conversation_id, run_id, seq, number, events, created)
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


def _delegation(
    rng: random.Random,
    tables: _Tables,
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
