"""What the finished runs of a span of time add to the dashboard, as a `Tally` that adds
up; and the tallies of past UTC days, kept in the database so that a period's figures
read a few dozen rows, not every run of the period.

A period (the last 24 hours, 7 days, 30 days) is its whole UTC days in between, read
from their `DayTally` rows, and the parts of a day at either end, counted from the runs.
A day is tallied once it has ended (and a few minutes more, so that what was written
just before midnight is committed), by the worker's sweeper or else by the first page
that needs it. Its tally is counted again when it is stale: one of the day's runs
finished or was queued again (Continue, Resume) since it was counted.

Percentiles come from counts of values: iterations exactly, tokens rounded up to a
thousand (the recommendation's own step, so the advice is exact), seconds and cost
rounded up to three significant figures (1,234 ms counts as 1,240 ms).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import (
    BigIntegerField,
    Count,
    F,
    Field,
    FloatField,
    IntegerField,
    Max,
    Q,
    QuerySet,
    Sum,
)
from django.db.models.functions import Cast, Round
from django.utils import timezone

from agents.loop import APPROVAL
from agents.state import LIMIT_REASONS, TerminationReason
from chat.models import Message, Role, Run, RunEvent, RunStatus
from dashboard.aggregates import Distribution, JsonText, UtcHour, ValueList, hour_key, values_of
from dashboard.filters import EVENTS, hour_start
from dashboard.models import DayTally
from dashboard.periods import PERIODS
from ops.alerts import Throttle

COMPLETED = TerminationReason.COMPLETED.value
ITERATION_STOPS = {
    TerminationReason.MAX_ITERATIONS.value,
    TerminationReason.TURN_BUDGET_EXHAUSTED.value,
}
TOKEN_STOPS = {TerminationReason.TOKEN_BUDGET.value}
MICRO = 1_000_000  # costs are counted in millionths of a dollar
TOKEN_STEP = 1_000  # tokens are counted to the thousand above (the advice's step)
FIGURES = 3  # seconds and cost are counted to three significant figures, rounded up
SETTLE = timedelta(minutes=5)  # a day is tallied this long after it ends
COMMITTED = timedelta(minutes=1)  # what was written this long ago is committed
KEEP_UP_EVERY_SECONDS = 60
VERSION = 2  # of a tally's JSON: a tally of another version is counted again


def rounded_up(value: int, figures: int = FIGURES) -> int:
    """`value` rounded up to `figures` significant figures (1,234 → 1,240)."""
    digits = len(str(abs(value)))
    if digits <= figures:
        return value
    step = int(10 ** (digits - figures))
    return -(-value // step) * step


def tokens_rounded_up(tokens: int) -> int:
    return -(-tokens // TOKEN_STEP) * TOKEN_STEP


# --- what a span adds up to ----------------------------------------------------------


@dataclass
class Group:
    """What one agent type (and skill) did: counts, sums and counts of values."""

    runs: int = 0
    limit_hits: int = 0
    cost: float = 0.0
    iterations: int = 0
    elapsed_ms: int = 0
    iteration_counts: Distribution = field(default_factory=Distribution)
    elapsed_counts: Distribution = field(default_factory=Distribution)  # ms, rounded up
    cost_counts: Distribution = field(default_factory=Distribution)  # millionths, rounded up
    completed_iterations: Distribution = field(default_factory=Distribution)
    completed_tokens: Distribution = field(default_factory=Distribution)  # to the thousand
    stopped_at_iterations: int = 0
    stopped_at_tokens: int = 0

    COUNTS = (
        "iteration_counts",
        "elapsed_counts",
        "cost_counts",
        "completed_iterations",
        "completed_tokens",
    )
    SUMS = (
        "runs",
        "limit_hits",
        "cost",
        "iterations",
        "elapsed_ms",
        "stopped_at_iterations",
        "stopped_at_tokens",
    )

    @classmethod
    def counted(cls, rows: Iterable[tuple[str, Mapping[str, Any]]]) -> Group:
        """A group from rows of a grouped query (`_main_groups`, `_helper_groups`), each
        with its reason."""
        group = cls()
        values: dict[str, list[int]] = {name: [] for name in cls.COUNTS}
        for reason, row in rows:
            runs = row["runs"]
            iterations = values_of(row["iteration_values"], int)
            group.runs += runs
            group.cost += row["cost"] or 0.0
            group.iterations += row["iterations_sum"] or 0
            group.elapsed_ms += row["elapsed_sum"] or 0
            values["iteration_counts"] += iterations
            values["elapsed_counts"] += values_of(row["elapsed_values"], int)
            values["cost_counts"] += values_of(row["cost_values"], int)
            if reason in LIMIT_REASONS:
                group.limit_hits += runs
            if reason == COMPLETED:
                values["completed_iterations"] += iterations
                values["completed_tokens"] += values_of(row["token_values"], int)
            elif reason in ITERATION_STOPS:
                group.stopped_at_iterations += runs
            elif reason in TOKEN_STOPS:
                group.stopped_at_tokens += runs
        rounding: dict[str, Callable[[int], int]] = {
            "elapsed_counts": rounded_up,
            "cost_counts": rounded_up,
            "completed_tokens": tokens_rounded_up,
        }
        for name, found in values.items():
            if name in rounding:
                found = list(map(rounding[name], found))
            setattr(group, name, Distribution.of(found))
        return group

    def add(self, other: Group) -> None:
        for name in self.SUMS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in self.COUNTS:
            getattr(self, name).add(getattr(other, name))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: getattr(self, name) for name in self.SUMS}
        for name in self.COUNTS:
            data[name] = getattr(self, name).to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Group:
        group = cls(**{name: data[name] for name in cls.SUMS})
        for name in cls.COUNTS:
            setattr(group, name, Distribution.from_json(data[name]))
        return group


@dataclass
class Hour:
    """One UTC hour: the runs started in it that finished, their cost, how many a limit
    ended; and the runs paused and extended in it."""

    runs: int = 0
    cost: float = 0.0
    ended: int = 0
    paused: int = 0
    extended: int = 0

    def add(self, other: Hour) -> None:
        self.runs += other.runs
        self.cost += other.cost
        self.ended += other.ended
        self.paused += other.paused
        self.extended += other.extended


@dataclass
class Tally:
    """What the finished runs started in a span of time add to the dashboard."""

    skills: dict[str, Group] = field(default_factory=dict)  # the main agent's, by skill
    helpers: dict[str, Group] = field(default_factory=dict)  # by agent type
    reasons: Counter[str] = field(default_factory=Counter)
    owners: dict[int, list[float]] = field(default_factory=dict)  # [cost, runs]
    hours: dict[str, Hour] = field(default_factory=dict)  # "2026-11-20 13"
    ended_by_action: Counter[str] = field(default_factory=Counter)
    stuck: Counter[str] = field(default_factory=Counter)  # runs by stuck pattern

    def add(self, other: Tally) -> None:
        for mine, theirs in ((self.skills, other.skills), (self.helpers, other.helpers)):
            for name, group in theirs.items():
                mine.setdefault(name, Group()).add(group)
        self.reasons.update(other.reasons)
        for owner, (cost, runs) in other.owners.items():
            totals = self.owners.setdefault(owner, [0.0, 0])
            totals[0] += cost
            totals[1] += runs
        for hour, counts in other.hours.items():
            self.hours.setdefault(hour, Hour()).add(counts)
        self.ended_by_action.update(other.ended_by_action)
        self.stuck.update(other.stuck)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "skills": {name: group.to_json() for name, group in self.skills.items()},
            "helpers": {name: group.to_json() for name, group in self.helpers.items()},
            "reasons": dict(self.reasons),
            "owners": {str(owner): totals for owner, totals in self.owners.items()},
            "hours": {hour: list(vars(counts).values()) for hour, counts in self.hours.items()},
            "ended_by_action": dict(self.ended_by_action),
            "stuck": dict(self.stuck),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tally:
        return cls(
            skills={name: Group.from_json(g) for name, g in data["skills"].items()},
            helpers={name: Group.from_json(g) for name, g in data["helpers"].items()},
            reasons=Counter(data["reasons"]),
            owners={int(owner): list(totals) for owner, totals in data["owners"].items()},
            hours={hour: Hour(*counts) for hour, counts in data["hours"].items()},
            ended_by_action=Counter(data["ended_by_action"]),
            stuck=Counter(data["stuck"]),
        )


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


# --- a period: its whole days from the database, its ends from the runs ---------------


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _whole_days(since: datetime, now: datetime) -> tuple[date, date]:
    """The first and last whole, settled UTC days in [since, now] (first > last: none)."""
    first = since.astimezone(UTC).date() + timedelta(days=1)
    last = (now - SETTLE).astimezone(UTC).date() - timedelta(days=1)
    return first, last


def period_tally(since: datetime, now: datetime) -> Tally:
    """What the runs started in [since, now] add up to."""
    first, last = _whole_days(since, now)
    if first > last:
        return tally(since)
    result = tally(since, _midnight(first))
    for day_tally in _day_tallies(first, last):
        result.add(day_tally)
    result.add(tally(_midnight(last + timedelta(days=1))))
    return result


def keep_up(now: datetime, span: timedelta) -> int:
    """Count the day tallies of the last `span` that are missing or stale, so that the
    page does not have to (the worker's sweeper calls it): how many it counted."""
    first, last = _whole_days(now - span, now)
    due = _days_to_count(first, last)
    # Days before the first run ever started add nothing: kept empty without counting
    # (on a new install that is every day of the span, a few queries each).
    earliest = Run.objects.order_by("created_at").values_list("created_at", flat=True).first()
    empty = {d for d in due if earliest is None or _midnight(d + timedelta(days=1)) <= earliest}
    began, nothing = timezone.now(), Tally().to_json()
    DayTally.objects.bulk_create(
        [DayTally(day=day, data=nothing, counted_at=began) for day in empty],
        update_conflicts=True, unique_fields=["day"], update_fields=["data", "counted_at"],
    )  # fmt: skip
    for day in sorted(due - empty):
        _count(day)
    return len(due)


_keeping_up = Throttle(KEEP_UP_EVERY_SECONDS)


def keep_up_if_due() -> int:
    """`keep_up` for the longest period when this process has not in the last minute."""
    if not _keeping_up.due(time.monotonic()):
        return 0
    return keep_up(timezone.now(), max(period.span for period in PERIODS))


def _day_tallies(first: date, last: date) -> list[Tally]:
    """The tallies of the UTC days from `first` to `last`, counted again where missing,
    of another version, or stale."""
    counted = {day: _count(day) for day in _days_to_count(first, last)}
    kept = DayTally.objects.filter(day__gte=first, day__lte=last).exclude(day__in=counted)
    return [*counted.values(), *(Tally.from_json(row.data) for row in kept)]


def _days_to_count(first: date, last: date) -> set[date]:
    """The days from `first` to `last` with no tally of this version, or a stale one."""
    kept = dict(
        DayTally.objects.filter(day__gte=first, day__lte=last, data__version=VERSION).values_list(
            "day", "counted_at"
        )
    )
    days = {first + timedelta(days=n) for n in range((last - first).days + 1)}
    return (days - kept.keys()) | _stale_days(kept, first, last)


def _stale_days(kept: Mapping[date, datetime], first: date, last: date) -> set[date]:
    """The kept days one of whose runs finished or was queued again since it was counted
    (less a minute: a run may have finished just before, and committed just after)."""
    if not kept:
        return set()
    since = min(kept.values()) - COMMITTED
    changed = (
        Run.objects.filter(
            Q(finished_at__gte=since) | Q(queued_at__gte=since),
            created_at__gte=_midnight(first),
            created_at__lt=_midnight(last + timedelta(days=1)),
        )
        .order_by()
        .annotate(hour=UtcHour("created_at"))
        .values("hour")
        .annotate(finished=Max("finished_at"), queued=Max("queued_at"))
    )
    stale = set()
    for row in changed:
        day = hour_start(hour_key(row["hour"])).date()
        latest = max(t for t in (row["finished"], row["queued"]) if t is not None)
        if day in kept and latest >= kept[day] - COMMITTED:
            stale.add(day)
    return stale


def _count(day: date) -> Tally:
    """Count a day's tally from its runs and keep it. Two pages (or a page and the
    sweeper) counting the same day at once count the same."""
    began = timezone.now()
    counted = tally(_midnight(day), _midnight(day + timedelta(days=1)))
    try:
        with transaction.atomic():
            DayTally.objects.update_or_create(
                day=day, defaults={"data": counted.to_json(), "counted_at": began}
            )
    except IntegrityError:  # another page kept it first (PostgreSQL): theirs will do
        pass
    return counted
