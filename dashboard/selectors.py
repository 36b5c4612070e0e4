"""Reads for the staff dashboard: every figure of a period from a handful of aggregate
queries, and the runs behind each figure.

What each figure counts:

- A run belongs to the period it was created in, and counts once it is finished
  (`status` finished: its counters are final). Its agent type is "oracle" (the main
  agent) and its skill is its conversation's. Its counters include its helpers' tokens
  and cost (they count toward its budgets).
- A helper (subagent) run is a `subagent.finished` event: its type, reason and
  counters, in the period it finished in. A helper its parent outlived unfinished was
  discarded and is not counted.
- A limit hit is a run a limit ended (`LIMIT_REASONS`), a run paused at a limit
  (`run.paused`) or a run whose iteration ceiling was raised (`budget.extended`), the
  last two counted in the hour of the event. Runs that went on under the `warn` action
  are not counted until a hard cap ends them.
- A run's limit action is the one its latest round ran under (`Run.limit_action`, set
  when a worker claims it).
- A stuck pattern is what the System notice of a run stopped for no progress names.

The queries read the indexes added for them (chat migration 0006): finished runs by
time with their counters, and one small index per kind of event counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db.models import (
    BigIntegerField,
    Count,
    Exists,
    F,
    Field,
    FloatField,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Sum,
)
from django.db.models.functions import Cast, Round
from django.utils import timezone

from agents.config import LimitAction
from agents.skills import SKILLS, Skill
from agents.state import LIMIT_REASONS, TerminationReason
from agents.subagents import MAIN_AGENT
from chat.models import Message, Role, Run, RunEvent, RunStatus
from dashboard.aggregates import JsonText, UtcHour, ValueList, hour_key, percentile, values_of
from dashboard.filters import (
    ANY_LIMIT,
    EVENTS,
    STUCK_NOTICE_START,
    RunFilters,
    day_span,
    hour_start,
    reason_name,
    run_list_url,
    stuck_notice_start,
    stuck_pattern,
)
from dashboard.periods import Period
from dashboard.recommendations import Limits, Recommendation, advise
from settings_ui.models import AgentTypeLimits, SiteDefaults
from settings_ui.policy import operator_limits

COMPLETED = TerminationReason.COMPLETED.value
ITERATION_STOPS = {
    TerminationReason.MAX_ITERATIONS.value,
    TerminationReason.TURN_BUDGET_EXHAUSTED.value,
}
TOKEN_STOPS = {TerminationReason.TOKEN_BUDGET.value}
MICRO = 1_000_000  # costs are kept to a millionth of a dollar
TOP_USERS = 10
TOP_PATTERNS = 10
RUNS_PER_PAGE = 50
MAX_ALERTS = 20


# --- the figures ---------------------------------------------------------------------


@dataclass(frozen=True)
class Spread:
    """The average and the 95th percentile of one quantity over a group of runs."""

    average: float | None
    p95: float | None


@dataclass(frozen=True)
class AgentRow:
    agent_type: str
    skill: str
    label: str
    runs: int
    limit_hits: int
    iterations: Spread
    seconds: Spread
    cost: Spread
    total_cost: float
    href: str
    hits_href: str


@dataclass(frozen=True)
class ReasonRow:
    reason: str
    label: str
    runs: int
    share: float
    is_limit: bool
    href: str


@dataclass(frozen=True, kw_only=True)
class LimitHits:
    """Limit hits of one kind or another: runs a limit ended, paused, extended."""

    ended: int
    paused: int
    extended: int
    ended_href: str
    paused_href: str
    extended_href: str

    @property
    def total(self) -> int:
        return self.ended + self.paused + self.extended


@dataclass(frozen=True, kw_only=True)
class HourRow(LimitHits):
    hour: str  # the UTC hour, "2026-11-20 13"
    start: datetime


@dataclass(frozen=True, kw_only=True)
class ActionRow(LimitHits):
    action: str


@dataclass(frozen=True)
class DayRow:
    day: date
    cost: float
    runs: int
    href: str


@dataclass(frozen=True)
class UserRow:
    user_id: int
    username: str
    cost: float
    runs: int
    href: str


@dataclass(frozen=True)
class StuckRow:
    pattern: str
    runs: int
    href: str


@dataclass(frozen=True)
class Figures:
    """Everything the dashboard shows for one period."""

    period: Period
    since: datetime
    now: datetime
    runs: int
    ended_by_limit: int
    paused: int
    extended: int
    spend: float
    helpers: int
    reasons: list[ReasonRow]
    hours: list[HourRow]
    actions: list[ActionRow]
    agents: list[AgentRow]
    days: list[DayRow]
    users: list[UserRow]
    stuck: list[StuckRow]
    recommendations: list[Recommendation]

    def href(self, **filters: Any) -> str:
        return run_list_url(self.period, **filters)

    @property
    def limit_share(self) -> float:
        return self.ended_by_limit / self.runs if self.runs else 0.0


@dataclass
class _Group:
    """What one agent type (and skill) did in the period, gathered from grouped rows."""

    runs: int = 0
    limit_hits: int = 0
    cost: float = 0.0
    iterations: int = 0
    elapsed_ms: int = 0
    iteration_values: list[int] = field(default_factory=list)
    elapsed_values: list[int] = field(default_factory=list)
    cost_values: list[int] = field(default_factory=list)
    completed_iterations: list[int] = field(default_factory=list)
    completed_tokens: list[int] = field(default_factory=list)
    stopped_at_iterations: int = 0
    stopped_at_tokens: int = 0

    def add(self, reason: str, row: Mapping[str, Any]) -> None:
        runs = row["runs"]
        iterations = values_of(row["iteration_values"], int)
        self.runs += runs
        self.cost += row["cost"] or 0.0
        self.iterations += row["iterations_sum"] or 0
        self.elapsed_ms += row["elapsed_sum"] or 0
        self.iteration_values += iterations
        self.elapsed_values += values_of(row["elapsed_values"], int)
        self.cost_values += values_of(row["cost_values"], int)  # millionths of a dollar
        if reason in LIMIT_REASONS:
            self.limit_hits += runs
        if reason == COMPLETED:
            self.completed_iterations += iterations
            self.completed_tokens += values_of(row["token_values"], int)
        elif reason in ITERATION_STOPS:
            self.stopped_at_iterations += runs
        elif reason in TOKEN_STOPS:
            self.stopped_at_tokens += runs

    def spreads(self) -> tuple[Spread, Spread, Spread]:
        if not self.runs:
            return Spread(None, None), Spread(None, None), Spread(None, None)
        p95_ms = percentile(self.elapsed_values) or 0
        p95_cost = percentile(self.cost_values) or 0
        return (
            Spread(self.iterations / self.runs, percentile(self.iteration_values)),
            Spread(self.elapsed_ms / self.runs / 1000, p95_ms / 1000),
            Spread(self.cost / self.runs, p95_cost / MICRO),
        )


def dashboard_figures(*, period: Period, now: datetime | None = None) -> Figures:
    """Every figure of the dashboard for the runs of `period` up to `now`."""
    now = now or timezone.now()
    since = period.since(now)
    skills: dict[str, _Group] = defaultdict(_Group)
    owners: dict[int, list[float]] = defaultdict(lambda: [0.0, 0])
    reasons: dict[str, int] = defaultdict(int)
    for row in _main_groups(since):
        skills[row["skill"]].add(row["reason"], row)
        owner = owners[row["owner"]]
        owner[0] += row["cost"] or 0.0
        owner[1] += row["runs"]
        reasons[row["reason"]] += row["runs"]
    helpers: dict[str, _Group] = defaultdict(_Group)
    for row in _helper_groups(since):
        helpers[row["agent_type"] or "?"].add(row["reason"] or "", row)
    runs = sum(reasons.values())
    by_hour = _by_hour(since)
    paused, extended = _runs_with_event("paused", since), _runs_with_event("extended", since)
    return Figures(
        period=period,
        since=since,
        now=now,
        runs=runs,
        ended_by_limit=sum(n for reason, n in reasons.items() if reason in LIMIT_REASONS),
        paused=paused,
        extended=extended,
        spend=sum(owner[0] for owner in owners.values()),
        helpers=sum(group.runs for group in helpers.values()),
        reasons=_reason_rows(period, reasons, runs),
        # The chart builds its bars' links itself: 720 hours in 30 days.
        hours=_hours(period, since, now, by_hour, links=False),
        actions=_action_rows(period, since, paused, extended),
        agents=_agent_rows(period, skills, helpers),
        days=_day_rows(period, since, now, by_hour),
        users=_user_rows(period, owners),
        stuck=_stuck_rows(period, since),
        recommendations=_recommendations(period, skills, helpers),
    )


def finished_runs(since: datetime) -> QuerySet[Run]:
    """The runs created since `since` that have finished."""
    return Run.objects.filter(status=RunStatus.FINISHED, created_at__gte=since)


def _micro_dollars(expression: Any) -> Cast:
    """A cost in millionths of a dollar, as runs keep it (whole: quicker to list)."""
    return Cast(Round(expression * MICRO), BigIntegerField())


def _main_groups(since: datetime) -> Iterable[Mapping[str, Any]]:
    """Finished runs by skill, owner and reason: counts, sums, and the values of the
    counters whose percentiles are shown (tokens of completed runs only)."""
    return (
        finished_runs(since)
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


def _helper_groups(since: datetime) -> Iterable[Mapping[str, Any]]:
    """Helpers that finished since `since`, by type and reason, with their counters."""

    def counter(name: str, kind: type[Field[Any, Any]] = IntegerField) -> Cast:
        return Cast(JsonText("data", "counters", name), kind())

    return (
        RunEvent.objects.filter(type="subagent.finished", created_at__gte=since)
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


def _events(kind: str, since: datetime) -> QuerySet[RunEvent]:
    return RunEvent.objects.filter(type=EVENTS[kind], created_at__gte=since).order_by()


def _runs_with_event(kind: str, since: datetime) -> int:
    return int(_events(kind, since).aggregate(runs=Count("run", distinct=True))["runs"])


def _utc_hours(since: datetime, now: datetime) -> list[tuple[str, datetime]]:
    """Every UTC hour from `since`'s to `now`'s: its key ("2026-11-20 13") and start."""
    start = since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    hours = []
    while start <= now:
        hours.append((start.strftime("%Y-%m-%d %H"), start))
        start += timedelta(hours=1)
    return hours


def _by_hour(since: datetime) -> dict[str, dict[str, Any]]:
    """Finished runs by the UTC hour they started: how many, their cost, and how many
    a limit ended."""
    rows = (
        finished_runs(since)
        .order_by()
        .annotate(hour=UtcHour("created_at"))
        .values("hour")
        .annotate(
            runs=Count("*"),
            cost=Sum("cost_usd"),
            ended=Count("id", filter=Q(reason__in=LIMIT_REASONS)),
        )
    )
    return {hour_key(row["hour"]): dict(row) for row in rows}


def limit_hits_by_hour(*, period: Period, now: datetime | None = None) -> list[HourRow]:
    """The hours of `period` in which a limit was hit, newest first."""
    now = now or timezone.now()
    since = period.since(now)
    hours = _hours(period, since, now, _by_hour(since))
    return [row for row in reversed(hours) if row.total]


def _hours(
    period: Period,
    since: datetime,
    now: datetime,
    by_hour: dict[str, dict[str, Any]],
    *,
    links: bool = True,
) -> list[HourRow]:
    """Limit hits per hour: runs ended by a limit (by the hour they started), and runs
    paused or extended (by the hour it happened)."""
    counts = {"ended": {hour: row["ended"] for hour, row in by_hour.items()}}
    for kind in EVENTS:
        rows = (
            _events(kind, since)
            .annotate(hour=UtcHour("created_at"))
            .values("hour")
            .annotate(runs=Count("run", distinct=True))
            .values_list("hour", "runs")
        )
        counts[kind] = {hour_key(hour): runs for hour, runs in rows}
    filters = {
        "ended": {"reason": ANY_LIMIT},
        "paused": {"event": "paused"},
        "extended": {"event": "extended"},
    }

    def link(kind: str, hour: str) -> str:  # only where there are runs
        if not links or not counts[kind].get(hour):
            return ""
        return run_list_url(period, hour=hour, **filters[kind])

    return [
        HourRow(
            hour=hour,
            start=start,
            ended=counts["ended"].get(hour, 0),
            paused=counts["paused"].get(hour, 0),
            extended=counts["extended"].get(hour, 0),
            ended_href=link("ended", hour),
            paused_href=link("paused", hour),
            extended_href=link("extended", hour),
        )
        for hour, start in _utc_hours(since, now)
    ]


def _reason_rows(period: Period, reasons: dict[str, int], runs: int) -> list[ReasonRow]:
    return [
        ReasonRow(
            reason=reason,
            label=reason_name(reason),
            runs=count,
            share=count / runs if runs else 0.0,
            is_limit=reason in LIMIT_REASONS,
            href=run_list_url(period, reason=reason),
        )
        for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    ]


def _action_rows(period: Period, since: datetime, paused: int, extended: int) -> list[ActionRow]:
    """Limit hits by the limit action in force: runs a limit ended under each action,
    and the runs paused (only `pause` pauses) and extended (only `extend` extends)."""
    ended = dict(
        Run.objects.filter(
            status=RunStatus.FINISHED, created_at__gte=since, reason__in=LIMIT_REASONS
        )
        .order_by()
        .values("limit_action")
        .annotate(runs=Count("id"))
        .values_list("limit_action", "runs")
    )
    actions = [action.value for action in LimitAction]
    actions += sorted(action for action in ended if action and action not in actions)
    return [
        ActionRow(
            action=action,
            ended=ended.get(action, 0),
            paused=paused if action == LimitAction.PAUSE else 0,
            extended=extended if action == LimitAction.EXTEND else 0,
            ended_href=run_list_url(period, reason=ANY_LIMIT, action=action),
            paused_href=run_list_url(period, event="paused"),
            extended_href=run_list_url(period, event="extended"),
        )
        for action in actions
    ]


def _skill_title(name: str) -> str:
    return next((skill.title for skill in SKILLS if skill.name == name), name)


def _agent_rows(
    period: Period, skills: dict[str, _Group], helpers: dict[str, _Group]
) -> list[AgentRow]:
    rows = []
    names = [skill.name for skill in SKILLS]
    names += sorted(name for name in skills if name not in names)
    for name in names:
        label = f"Oracle · {_skill_title(name)}"
        rows.append(_agent_row(period, skills.get(name), MAIN_AGENT, name, label, skill=name))
    types = sorted({*helpers, *AgentTypeLimits.objects.values_list("name", flat=True)})
    for name in types:
        rows.append(_agent_row(period, helpers.get(name), name, "", f"Helper · {name}", agent=name))
    return rows


def _agent_row(
    period: Period, group: _Group | None, agent_type: str, of_skill: str, label: str, **runs: str
) -> AgentRow:
    """One agent type's (or skill's) row; `runs` filters the run list behind it."""
    group = group or _Group()
    iterations, seconds, cost = group.spreads()
    return AgentRow(
        agent_type=agent_type,
        skill=of_skill,
        label=label,
        runs=group.runs,
        limit_hits=group.limit_hits,
        iterations=iterations,
        seconds=seconds,
        cost=cost,
        total_cost=group.cost,
        href=run_list_url(period, **runs),
        hits_href=run_list_url(period, **runs, reason=ANY_LIMIT),
    )


def _day_rows(
    period: Period, since: datetime, now: datetime, by_hour: dict[str, dict[str, Any]]
) -> list[DayRow]:
    """Spend per day in the site's time zone, summed from spend per UTC hour."""
    days: dict[date, list[float]] = {}
    day = timezone.localdate(since)
    while day <= timezone.localdate(now):
        days[day] = [0.0, 0]
        day += timedelta(days=1)
    for hour, row in by_hour.items():
        totals = days.setdefault(timezone.localdate(hour_start(hour)), [0.0, 0])
        totals[0] += row["cost"] or 0.0
        totals[1] += row["runs"]
    return [
        DayRow(day=day, cost=cost, runs=int(runs), href=run_list_url(period, day=day.isoformat()))
        for day, (cost, runs) in sorted(days.items())
    ]


def _user_rows(period: Period, owners: dict[int, list[float]]) -> list[UserRow]:
    top = sorted(owners.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))[:TOP_USERS]
    names = dict(User.objects.filter(pk__in=[pk for pk, _ in top]).values_list("pk", "username"))
    return [
        UserRow(
            user_id=pk,
            username=names.get(pk, f"#{pk}"),
            cost=cost,
            runs=int(runs),
            href=run_list_url(period, user=pk),
        )
        for pk, (cost, runs) in top
    ]


def _stuck_rows(period: Period, since: datetime) -> list[StuckRow]:
    """The patterns runs stopped for no progress were stuck in, most frequent first."""
    notices = (
        Message.objects.filter(
            role=Role.SYSTEM,
            content__startswith=STUCK_NOTICE_START,
            run__status=RunStatus.FINISHED,
            run__reason=TerminationReason.NO_PROGRESS,
            run__created_at__gte=since,
        )
        .order_by()
        .values("content")
        .annotate(runs=Count("run", distinct=True))
    )
    patterns: dict[str, int] = defaultdict(int)
    for row in notices:
        patterns[stuck_pattern(row["content"])] += row["runs"]
    top = sorted(patterns.items(), key=lambda item: (-item[1], item[0]))[:TOP_PATTERNS]
    return [
        StuckRow(
            pattern=pattern,
            runs=runs,
            href=run_list_url(period, reason=TerminationReason.NO_PROGRESS, pattern=pattern),
        )
        for pattern, runs in top
    ]


def _recommendations(
    period: Period, skills: dict[str, _Group], helpers: dict[str, _Group]
) -> list[Recommendation]:
    site = SiteDefaults.config()
    operator = operator_limits()
    rows = []
    for skill in SKILLS:
        config = skill.config(site, operator)
        group = skills.get(skill.name, _Group())
        rows.append(
            Recommendation(
                agent_type=MAIN_AGENT,
                skill=skill.name,
                label=f"Oracle · {skill.title}",
                completed=len(group.completed_iterations),
                stopped_at_iterations=group.stopped_at_iterations,
                stopped_at_tokens=group.stopped_at_tokens,
                current=Limits(config.max_iterations, config.token_budget),
                advised=advise(group.completed_iterations, group.completed_tokens),
                applies_to="the settings new users start with",
                note=_skill_note(skill),
                href=run_list_url(period, skill=skill.name, reason=COMPLETED),
            )
        )
    for row in AgentTypeLimits.objects.order_by("name"):
        group, limits = helpers.get(row.name, _Group()), row.limits()
        rows.append(
            Recommendation(
                agent_type=row.name,
                skill="",
                label=f"Helper · {row.name}",
                completed=len(group.completed_iterations),
                stopped_at_iterations=group.stopped_at_iterations,
                stopped_at_tokens=group.stopped_at_tokens,
                current=Limits(limits["max_iterations"], limits["token_budget"]),
                advised=advise(group.completed_iterations, group.completed_tokens),
                applies_to=f"the {row.name} subagent type",
                href=run_list_url(period, agent=row.name, reason=COMPLETED),
            )
        )
    return rows


def _skill_note(skill: Skill) -> str:
    """Why a skill's limits are not its own to change ("" when they are the defaults)."""
    if skill.iteration_cap is not None:
        return (
            f"{skill.title} caps iterations at {skill.iteration_cap}; its token budget is "
            "the default one."
        )
    if skill.iteration_multiplier > 1:
        return (
            f"{skill.title} runs get {skill.iteration_multiplier} times the default "
            "iterations (at most 50) and the default token budget."
        )
    return ""


# --- the runs behind a figure -------------------------------------------------------


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
    if filters.event:
        events = _events(filters.event, since)
        if span:
            events = events.filter(created_at__gte=span[0], created_at__lt=span[1])
        runs = Run.objects.filter(pk__in=events.values("run"))
    else:
        runs = finished_runs(since)
        if span:
            runs = runs.filter(created_at__gte=span[0], created_at__lt=span[1])
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
            run=OuterRef("pk"),
            role=Role.SYSTEM,
            content__startswith=stuck_notice_start(filters.pattern),
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
    for run_id, content in (
        Message.objects.filter(
            run__in=stuck, role=Role.SYSTEM, content__startswith=STUCK_NOTICE_START
        )
        .order_by("seq")
        .values_list("run", "content")
    ):
        patterns[run_id] = stuck_pattern(content)  # the latest one
    return [
        RunRow(
            id=str(run.pk),
            created_at=run.created_at,
            username=run.conversation.owner.username,
            skill=run.conversation.skill,
            agent_type=MAIN_AGENT,
            status=run.status,
            reason=run.reason,
            reason_label=reason_name(run.reason) if run.reason else "",
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
    events = RunEvent.objects.filter(
        type="subagent.finished", created_at__gte=since, data__agent_type=filters.agent
    )
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
        reason_label=reason_name(reason) if reason else "",
        action="",
        iterations=int(counters.get("iterations") or 0),
        tool_calls=int(counters.get("tool_calls") or 0),
        tokens=int(counters.get("tokens") or 0),
        cost_usd=float(counters.get("cost_usd") or 0.0),
        seconds=int(counters.get("elapsed_ms") or 0) / 1000,
    )


# --- alerts (from ops, when it has them) ------------------------------------------------


def open_alerts() -> list[Any]:
    """The operator's alerts no one has acknowledged, newest first (from `ops.alerts`:
    objects with `pk`, `title`, `detail`, `created_at`); none where ops has no alerts."""
    try:
        from ops.alerts import open_alerts as ops_open_alerts
    except ImportError:  # pragma: no cover - an install without ops' alerts
        return []
    return list(ops_open_alerts()[:MAX_ALERTS])
