"""A span's `Tally` counted from its runs: the handful of grouped queries behind every
figure (finished runs by skill, owner and reason; helpers by type; hours; pauses and
extensions; limit actions; stuck patterns; the context window per model), and the runs
and events they count.

Those queries read the indexes added for them (chat migration 0006): finished runs by
time with their counters, and one small index per kind of event counted. The context
window's events (`context.compacted`, `context.refused`) have no such index yet: SQLite
reads them through their runs (the finished runs' index, then each run's events by
`run`), PostgreSQL scans every event for them. Their query is written for an index of
each type's events by time, like the others (`created_at`, `run`, on that type only).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from django.db.models import (
    BigIntegerField,
    Count,
    F,
    Field,
    FloatField,
    IntegerField,
    Q,
    QuerySet,
    Sum,
)
from django.db.models.functions import Cast, Round

from agents.events import APPROVAL, EventType
from agents.state import LIMIT_REASONS, TerminationReason
from chat.models import Message, Role, Run, RunEvent, RunStatus
from dashboard.aggregates import JsonText, UtcHour, ValueList, hour_key
from dashboard.filters import EVENTS
from dashboard.tally import COMPLETED, MICRO, ContextCounts, Group, Hour, Tally


def tally(start: datetime, end: datetime | None = None) -> Tally:
    """What the runs started in [start, end) that have finished add up to (helpers and
    pauses by the time they happened), counted from the runs. No `end`: up to now."""
    result = Tally()
    skills: dict[str, list[tuple[str, Mapping[str, Any]]]] = defaultdict(list)
    for row in _main_groups(start, end):
        skills[row["skill"]].append((row["reason"], row))
        owner = result.owners.setdefault(row["owner"], [0.0, 0])
        owner[0] += row["cost"] or 0.0
        owner[1] += row["runs"]
        result.reasons[row["reason"]] += row["runs"]
    result.skills = {skill: Group.counted(rows) for skill, rows in skills.items()}
    helpers: dict[str, list[tuple[str, Mapping[str, Any]]]] = defaultdict(list)
    for row in _helper_groups(start, end):
        helpers[row["agent_type"] or "?"].append((row["reason"] or "", row))
    result.helpers = {name: Group.counted(rows) for name, rows in helpers.items()}
    for row in _by_hour(start, end):
        result.hours[hour_key(row["hour"])] = Hour(row["runs"], row["cost"] or 0.0, row["ended"])
    for kind in EVENTS:
        for hour, runs in _events_by_hour(kind, start, end):
            setattr(result.hours.setdefault(hour_key(hour), Hour()), kind, runs)
    result.ended_by_action.update(dict(_ended_by_action(start, end)))
    result.stuck.update(dict(_stuck_patterns(start, end)))
    for row in _context_events(start, end):
        counts = result.context.setdefault(row["model"] or "", ContextCounts())
        if row["type"] == EventType.CONTEXT_COMPACTED:
            counts.compacted += row["events"]
            counts.summarised += row["summarised"]
        else:
            counts.refused += row["events"]
    for model, runs in _context_endings(start, end):
        result.context.setdefault(model or "", ContextCounts()).ended += runs
    return result


def finished_runs(start: datetime, end: datetime | None = None) -> QuerySet[Run]:
    """The runs started in [start, end) that have finished."""
    runs = Run.objects.filter(status=RunStatus.FINISHED, created_at__gte=start)
    return runs.filter(created_at__lt=end) if end else runs


def _micro_dollars(expression: Any) -> Cast:
    """A cost in millionths of a dollar (whole numbers: quicker to list)."""
    return Cast(Round(expression * MICRO), BigIntegerField())


def _main_groups(start: datetime, end: datetime | None) -> Iterable[Mapping[str, Any]]:
    """Finished runs by skill, owner and reason: counts, sums, and the values of the
    counters whose percentiles are shown (tokens of completed runs only)."""
    return (
        finished_runs(start, end)
        .order_by()
        .values("reason", skill=F("conversation__skill"), owner=F("conversation__owner_id"))
        .annotate(
            runs=Count("*"),
            cost=Sum("cost_usd"),
            iterations_sum=Sum("iterations"),
            elapsed_sum=Sum("elapsed_ms"),
            iteration_values=ValueList("iterations"),
            elapsed_values=ValueList("elapsed_ms"),
            cost_values=ValueList(_micro_dollars(F("cost_usd"))),
            token_values=ValueList("tokens", filter=Q(reason=COMPLETED)),
        )
    )


def _helper_groups(start: datetime, end: datetime | None) -> Iterable[Mapping[str, Any]]:
    """Helpers that finished in [start, end), by type and reason, with their counters."""

    def counter(name: str, kind: type[Field[Any, Any]] = IntegerField) -> Cast:
        return Cast(JsonText("data", "counters", name), kind())

    return (
        helpers_finished(start, end)
        .order_by()
        .values(agent_type=JsonText("data", "agent_type"), reason=JsonText("data", "reason"))
        .annotate(
            runs=Count("*"),
            cost=Sum(counter("cost_usd", FloatField)),
            iterations_sum=Sum(counter("iterations")),
            elapsed_sum=Sum(counter("elapsed_ms")),
            iteration_values=ValueList(counter("iterations")),
            elapsed_values=ValueList(counter("elapsed_ms")),
            cost_values=ValueList(_micro_dollars(counter("cost_usd", FloatField))),
            token_values=ValueList(counter("tokens")),
        )
    )


def helpers_finished(start: datetime, end: datetime | None = None) -> QuerySet[RunEvent]:
    """The helpers (subagents) that finished in [start, end): their `subagent.finished`."""
    found = RunEvent.objects.filter(type="subagent.finished", created_at__gte=start)
    return found.filter(created_at__lt=end) if end else found


def events(kind: str, start: datetime, end: datetime | None = None) -> QuerySet[RunEvent]:
    """The pauses or extensions (`kind`, one of `EVENTS`) in [start, end)."""
    found = RunEvent.objects.filter(type=EVENTS[kind], created_at__gte=start).order_by()
    if kind == "paused":  # a wait for the user's approval of a tool call is no limit's
        found = found.exclude(data__reason=APPROVAL)
    return found.filter(created_at__lt=end) if end else found


def _by_hour(start: datetime, end: datetime | None) -> Iterable[Mapping[str, Any]]:
    return (
        finished_runs(start, end)
        .order_by()
        .annotate(hour=UtcHour("created_at"))
        .values("hour")
        .annotate(
            runs=Count("*"),
            cost=Sum("cost_usd"),
            ended=Count("id", filter=Q(reason__in=LIMIT_REASONS)),
        )
    )


def _events_by_hour(kind: str, start: datetime, end: datetime | None) -> Iterable[tuple[Any, int]]:
    return (
        events(kind, start, end)
        .annotate(hour=UtcHour("created_at"))
        .values("hour")
        .annotate(runs=Count("run", distinct=True))
        .values_list("hour", "runs")
    )


def _ended_by_action(start: datetime, end: datetime | None) -> Iterable[tuple[str, int]]:
    return (
        finished_runs(start, end)
        .filter(reason__in=LIMIT_REASONS)
        .order_by()
        .values("limit_action")
        .annotate(runs=Count("id"))
        .values_list("limit_action", "runs")
    )


def _stuck_patterns(start: datetime, end: datetime | None) -> Iterable[tuple[str, int]]:
    """The patterns the runs stopped for no progress repeated (their notices' `pattern`),
    with how many runs."""
    notices = Message.objects.filter(
        role=Role.SYSTEM,
        metadata__has_key="pattern",
        run__status=RunStatus.FINISHED,
        run__reason=TerminationReason.NO_PROGRESS,
        run__created_at__gte=start,
    )
    if end:
        notices = notices.filter(run__created_at__lt=end)
    return (
        notices.order_by()
        .values(pattern=JsonText("metadata", "pattern"))
        .annotate(runs=Count("run", distinct=True))
        .values_list("pattern", "runs")
    )


def _of_finished_runs(start: datetime, end: datetime | None) -> Q:
    """Events of the runs started in [start, end) that have finished."""
    runs = Q(run__status=RunStatus.FINISHED, run__created_at__gte=start)
    return runs & Q(run__created_at__lt=end) if end else runs


def _context_events(start: datetime, end: datetime | None) -> Iterable[Mapping[str, Any]]:
    """The requests shortened to fit the model's context window (and how many of those
    summarised) and the requests refused as too long, by model, in the runs started in
    [start, end) that have finished. (An event comes after its run started: the bound on
    its own time changes nothing but lets an index of each type's events by time serve.)"""
    # One equality a type, not `IN`: SQLite uses a partial index by type only then.
    of_type = Q(type=EventType.CONTEXT_COMPACTED) | Q(type=EventType.CONTEXT_REFUSED)
    return (
        RunEvent.objects.filter(of_type, _of_finished_runs(start, end), created_at__gte=start)
        .order_by()
        .values("type", model=JsonText("data", "model"))
        .annotate(events=Count("*"), summarised=Count("id", filter=Q(data__summarised=True)))
    )


def _context_endings(start: datetime, end: datetime | None) -> Iterable[tuple[str, int]]:
    """The runs started in [start, end) that ended because a request could not fit the
    model's context window even shortened, by the model they started with."""
    return (
        RunEvent.objects.filter(
            _of_finished_runs(start, end),
            type=EventType.RUN_STARTED,
            run__reason=TerminationReason.CONTEXT_WINDOW,
        )
        .order_by()
        .values(model=JsonText("data", "model"))
        .annotate(runs=Count("run", distinct=True))
        .values_list("model", "runs")
    )
