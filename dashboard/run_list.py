"""The runs behind a figure: the page of runs a run list's filters select, newest first,
with their counters, reason, limit action and stuck pattern (never their messages)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from agents.events import EventType
from agents.state import LIMIT_REASONS, TerminationReason
from agents.subagents import MAIN_AGENT
from agents.wording import reason_label
from chat.models import Message, Role, Run, RunEvent, RunStatus
from dashboard import counting
from dashboard.filters import ANY_LIMIT, CONTEXT_EVENTS, EVENTS, RunFilters, day_span, hour_start

RUNS_PER_PAGE = 50


@dataclass(frozen=True)
class RunRow:
    """One run of the run list: its counters, reason and stuck pattern (no messages)."""

    id: str
    created_at: datetime
    username: str
    skill: str
    agent_type: str
    status: str
    reason: str
    reason_label: str
    action: str
    iterations: int
    tool_calls: int
    tokens: int
    cost_usd: float
    seconds: float
    pattern: str = ""

    @property
    def is_limit(self) -> bool:
        return self.reason in LIMIT_REASONS


def run_list(filters: RunFilters, *, now: datetime | None = None) -> tuple[Page[Any], list[RunRow]]:
    """The page of runs `filters` select, newest first."""
    now = now or timezone.now()
    since = filters.period.since(now)
    if filters.agent == MAIN_AGENT:
        runs = _main_runs(filters, since).order_by("-created_at")
        page = Paginator(runs, RUNS_PER_PAGE).get_page(filters.page)
        return page, _main_rows(list(page.object_list))
    events = _helper_runs(filters, since).order_by("-created_at")
    helper_page = Paginator(events, RUNS_PER_PAGE).get_page(filters.page)
    return helper_page, [_helper_row(event) for event in helper_page.object_list]


def _time_span(filters: RunFilters) -> tuple[datetime, datetime] | None:
    if filters.hour:
        start = hour_start(filters.hour)
        return start, start + timedelta(hours=1)
    if filters.day:
        return day_span(filters.day)
    return None


def _main_runs(filters: RunFilters, since: datetime) -> QuerySet[Run]:
    span = _time_span(filters)
    if filters.event in EVENTS:
        events = counting.events(filters.event, since)
        if span:
            events = events.filter(created_at__gte=span[0], created_at__lt=span[1])
        runs = Run.objects.filter(pk__in=events.values("run"))
    else:
        runs = counting.finished_runs(since)
        if span:
            runs = runs.filter(created_at__gte=span[0], created_at__lt=span[1])
    if filters.event in CONTEXT_EVENTS:  # each run's own events (by `run`: no other index)
        had = RunEvent.objects.filter(run=OuterRef("pk"), type=CONTEXT_EVENTS[filters.event])
        runs = runs.filter(Exists(had))
    if filters.model:  # the model the run started with
        started = RunEvent.objects.filter(
            run=OuterRef("pk"), type=EventType.RUN_STARTED, data__model=filters.model
        )
        runs = runs.filter(Exists(started))
    if filters.skill:
        runs = runs.filter(conversation__skill=filters.skill)
    if filters.reason == ANY_LIMIT:
        runs = runs.filter(reason__in=LIMIT_REASONS)
    elif filters.reason:
        runs = runs.filter(reason=filters.reason)
    if filters.user:
        runs = runs.filter(conversation__owner_id=filters.user)
    if filters.action:
        runs = runs.filter(limit_action=filters.action)
    if filters.pattern:
        notices = Message.objects.filter(
            run=OuterRef("pk"), role=Role.SYSTEM, metadata__pattern=filters.pattern
        )
        runs = runs.filter(Exists(notices))
    return runs.select_related("conversation__owner").only(
        "id", "created_at", "status", "reason", "iterations", "tool_calls", "tokens",
        "cost_usd", "elapsed_ms", "limit_action", "conversation__skill",
        "conversation__owner__username",
    )  # fmt: skip


def _main_rows(runs: Sequence[Run]) -> list[RunRow]:
    stuck = [run.pk for run in runs if run.reason == TerminationReason.NO_PROGRESS]
    patterns: dict[Any, str] = {}
    for run_id, pattern in (
        Message.objects.filter(run__in=stuck, role=Role.SYSTEM, metadata__has_key="pattern")
        .order_by("seq")
        .values_list("run", "metadata__pattern")
    ):
        patterns[run_id] = pattern  # the latest one
    return [
        RunRow(
            id=str(run.pk),
            created_at=run.created_at,
            username=run.conversation.owner.username,
            skill=run.conversation.skill,
            agent_type=MAIN_AGENT,
            status=run.status,
            reason=run.reason,
            reason_label=reason_label(run.reason, staff=True) if run.reason else "",
            action=run.limit_action,
            iterations=run.iterations,
            tool_calls=run.tool_calls,
            tokens=run.tokens,
            cost_usd=run.cost_usd,
            seconds=run.elapsed_ms / 1000,
            pattern=patterns.get(run.pk, ""),
        )
        for run in runs
    ]


def _helper_runs(filters: RunFilters, since: datetime) -> QuerySet[RunEvent]:
    events = counting.helpers_finished(since).filter(data__agent_type=filters.agent)
    span = _time_span(filters)
    if span:
        events = events.filter(created_at__gte=span[0], created_at__lt=span[1])
    if filters.reason == ANY_LIMIT:
        events = events.filter(data__reason__in=LIMIT_REASONS)
    elif filters.reason:
        events = events.filter(data__reason=filters.reason)
    if filters.skill:
        events = events.filter(run__conversation__skill=filters.skill)
    if filters.user:
        events = events.filter(run__conversation__owner_id=filters.user)
    return events.select_related("run__conversation__owner").only(
        "data", "created_at", "run__id", "run__conversation__skill",
        "run__conversation__owner__username",
    )  # fmt: skip


def _helper_row(event: RunEvent) -> RunRow:
    data: dict[str, Any] = event.data
    counters: dict[str, Any] = data.get("counters") or {}
    reason = str(data.get("reason") or "")
    run = event.run
    return RunRow(
        id=str(run.pk),
        created_at=event.created_at,
        username=run.conversation.owner.username,
        skill=run.conversation.skill,
        agent_type=str(data.get("agent_type") or ""),
        status=RunStatus.FINISHED,
        reason=reason,
        reason_label=reason_label(reason, staff=True) if reason else "",
        action="",
        iterations=int(counters.get("iterations") or 0),
        tool_calls=int(counters.get("tool_calls") or 0),
        tokens=int(counters.get("tokens") or 0),
        cost_usd=float(counters.get("cost_usd") or 0.0),
        seconds=int(counters.get("elapsed_ms") or 0) / 1000,
    )
