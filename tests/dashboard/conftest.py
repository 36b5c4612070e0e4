"""Runs made in code as the engine leaves them (counters, the `run.started` config, the
no-progress notice, pauses, extensions, helpers' events) for the dashboard's tests."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from agents.config import AgentConfig, LimitAction
from agents.state import LimitHit, Metric, TerminationReason
from agents.wording import stop_notice
from chat.models import Conversation, Message, Role, Run, RunEvent, RunStatus

NOW = timezone.now()
_seq = itertools.count(1)


@pytest.fixture
def staff(db: None) -> User:
    return User.objects.create_user("olga", password="correct horse battery", is_staff=True)


@pytest.fixture
def staff_client(client: Client, staff: User) -> Client:
    client.force_login(staff)
    return client


@dataclass
class Helper:
    """A subagent's finished event in a run."""

    agent_type: str
    reason: str = "completed"
    iterations: int = 1
    tokens: int = 1_000
    cost_usd: float = 0.001
    elapsed_ms: int = 1_000


@dataclass
class Made:
    run: Run
    helpers: list[RunEvent] = field(default_factory=list)


def make_run(
    owner: User,
    *,
    skill: str = "default",
    reason: str = "completed",
    iterations: int = 1,
    tokens: int = 1_000,
    cost_usd: float = 0.01,
    elapsed_ms: int = 1_000,
    ago: timedelta = timedelta(hours=1),
    action: str = LimitAction.STOP,
    status: str = RunStatus.FINISHED,
    pattern: str = "",
    paused: bool = False,
    extended: bool = False,
    helpers: tuple[Helper, ...] = (),
    question: str = "What is the answer?",
) -> Made:
    """A run of `owner`'s in a conversation of its own, created `ago` before NOW."""
    created = NOW - ago
    conversation = Conversation.objects.create(owner=owner, skill=skill, title="A chat")
    user_message = Message.objects.create(
        conversation=conversation, seq=1, role=Role.USER, content=question
    )
    run = Run.objects.create(
        conversation=conversation,
        user_message=user_message,
        status=status,
        reason=reason if status == RunStatus.FINISHED else "",
        iterations=iterations,
        tool_calls=max(iterations - 1, 0),
        tokens=tokens,
        cost_usd=cost_usd,
        elapsed_ms=elapsed_ms,
        limit_action=LimitAction(action).value,  # as the worker's claim sets it
    )
    Run.objects.filter(pk=run.pk).update(created_at=created)
    run.created_at = created
    seq = itertools.count(1)
    config = AgentConfig(limit_action=LimitAction(action)).to_dict()
    events: list[tuple[str, dict[str, Any]]] = [("run.started", {"config": config})]
    if paused:
        events.append(("run.paused", {"reason": reason}))
    if extended:
        events.append(("budget.extended", {"from": 15, "to": 50}))
    for index, helper in enumerate(helpers):
        counters = {
            "iterations": helper.iterations,
            "tool_calls": 0,
            "tokens": helper.tokens,
            "cost_usd": helper.cost_usd,
            "elapsed_ms": helper.elapsed_ms,
        }
        events.append(
            (
                "subagent.finished",
                {
                    "call_id": f"call-{index}",
                    "agent_type": helper.agent_type,
                    "reason": helper.reason,
                    "counters": counters,
                },
            )
        )
    made = Made(run)
    for kind, data in events:
        number = next(seq)
        event = RunEvent.objects.create(
            run=run, seq=number, type=kind, data={"type": kind, "seq": number, **data}
        )
        RunEvent.objects.filter(pk=event.pk).update(created_at=created)
        if kind == "subagent.finished":
            made.helpers.append(event)
    Message.objects.create(
        conversation=conversation, run=run, seq=2, role=Role.ASSISTANT,
        content="The secret answer.", metadata={"final": True}, termination_reason=reason,
    )  # fmt: skip
    if reason == TerminationReason.NO_PROGRESS:
        hit = LimitHit(Metric.REPEATS, 3, 3, pattern=pattern)
        Message.objects.create(
            conversation=conversation, run=run, seq=3, role=Role.SYSTEM,
            content=stop_notice(TerminationReason.NO_PROGRESS, hit),
            metadata={"severity": "warning", "metric": "repeats", "reason": reason,
                      **hit.facts()},
        )  # fmt: skip
    return made
