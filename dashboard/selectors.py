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
- A stuck pattern is the `pattern` of the System notice of a run stopped for no progress.

The figures of a period add up the tallies of its whole UTC days, kept in the database,
and count its two ends from the runs (`dashboard.tallies`). Those queries read the
indexes added for them (chat migration 0006): finished runs by time with their counters,
and one small index per kind of event counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, OuterRef, QuerySet
from django.utils import timezone

from agents.config import LimitAction
from agents.skills import SKILLS, Skill
from agents.state import LIMIT_REASONS, TerminationReason
from agents.subagents import MAIN_AGENT
from agents.wording import reason_label
from chat.models import Message, Role, Run, RunEvent, RunStatus
from dashboard import tallies
from dashboard.filters import (
    ANY_LIMIT,
    RunFilters,
    day_span,
    hour_start,
    run_list_url,
)
from dashboard.periods import Period
from dashboard.recommendations import Limits, Recommendation, advise
from dashboard.tallies import COMPLETED, MICRO, Group, Hour, period_tally
from settings_ui.models import AgentTypeLimits, SiteDefaults
from settings_ui.policy import operator_limits

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


def dashboard_figures(*, period: Period, now: datetime | None = None) -> Figures:
    """Every figure of the dashboard for the runs of `period` up to `now`."""
    now = now or timezone.now()
    since = period.since(now)
    counted = period_tally(since, now)
    runs = sum(counted.reasons.values())
    paused, extended = _runs_with_event("paused", since), _runs_with_event("extended", since)
    return Figures(
        period=period,
        since=since,
        now=now,
        runs=runs,
        ended_by_limit=sum(n for reason, n in counted.reasons.items() if reason in LIMIT_REASONS),
        paused=paused,
        extended=extended,
        spend=sum(owner[0] for owner in counted.owners.values()),
        helpers=sum(group.runs for group in counted.helpers.values()),
        reasons=_reason_rows(period, counted.reasons, runs),
        # The chart builds its bars' links itself: 720 hours in 30 days.
        hours=_hours(period, since, now, counted.hours, links=False),
        actions=_action_rows(period, counted.ended_by_action, paused, extended),
        agents=_agent_rows(period, counted.skills, counted.helpers),
        days=_day_rows(period, since, now, counted.hours),
        users=_user_rows(period, counted.owners),
        stuck=_stuck_rows(period, counted.stuck),
        recommendations=_recommendations(period, counted.skills, counted.helpers),
    )


def _spreads(group: Group) -> tuple[Spread, Spread, Spread]:
    """The average and 95th percentile of a group's iterations, seconds and cost."""
    if not group.runs:
        return Spread(None, None), Spread(None, None), Spread(None, None)
    p95_ms = group.elapsed_counts.percentile() or 0
    p95_cost = group.cost_counts.percentile() or 0
    return (
        Spread(group.iterations / group.runs, group.iteration_counts.percentile()),
        Spread(group.elapsed_ms / group.runs / 1000, p95_ms / 1000),
        Spread(group.cost / group.runs, p95_cost / MICRO),
    )


def _runs_with_event(kind: str, since: datetime) -> int:
    return int(tallies.events(kind, since).aggregate(runs=Count("run", distinct=True))["runs"])


def _utc_hours(since: datetime, now: datetime) -> list[tuple[str, datetime]]:
    """Every UTC hour from `since`'s to `now`'s: its key ("2026-11-20 13") and start."""
    start = since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    hours = []
    while start <= now:
        hours.append((start.strftime("%Y-%m-%d %H"), start))
        start += timedelta(hours=1)
    return hours


def limit_hits_by_hour(*, period: Period, now: datetime | None = None) -> list[HourRow]:
    """The hours of `period` in which a limit was hit, newest first."""
    now = now or timezone.now()
    since = period.since(now)
    hours = _hours(period, since, now, period_tally(since, now).hours)
    return [row for row in reversed(hours) if row.total]


def _hours(
    period: Period,
    since: datetime,
    now: datetime,
    by_hour: Mapping[str, Hour],
    *,
    links: bool = True,
) -> list[HourRow]:
    """Limit hits per hour: runs ended by a limit (by the hour they started), and runs
    paused or extended (by the hour it happened)."""
    filters = {
        "ended": {"reason": ANY_LIMIT},
        "paused": {"event": "paused"},
        "extended": {"event": "extended"},
    }

    def link(kind: str, hour: str, runs: int) -> str:  # only where there are runs
        return run_list_url(period, hour=hour, **filters[kind]) if links and runs else ""

    rows = []
    for hour, start in _utc_hours(since, now):
        counts = by_hour.get(hour) or Hour()
        rows.append(
            HourRow(
                hour=hour,
                start=start,
                ended=counts.ended,
                paused=counts.paused,
                extended=counts.extended,
                ended_href=link("ended", hour, counts.ended),
                paused_href=link("paused", hour, counts.paused),
                extended_href=link("extended", hour, counts.extended),
            )
        )
    return rows


def _reason_rows(period: Period, reasons: Mapping[str, int], runs: int) -> list[ReasonRow]:
    return [
        ReasonRow(
            reason=reason,
            label=reason_label(reason, staff=True),
            runs=count,
            share=count / runs if runs else 0.0,
            is_limit=reason in LIMIT_REASONS,
            href=run_list_url(period, reason=reason),
        )
        for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    ]


def _action_rows(
    period: Period, ended: Mapping[str, int], paused: int, extended: int
) -> list[ActionRow]:
    """Limit hits by the limit action in force: runs a limit ended under each action,
    and the runs paused (only `pause` pauses) and extended (only `extend` extends)."""
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
    period: Period, skills: Mapping[str, Group], helpers: Mapping[str, Group]
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
    period: Period, group: Group | None, agent_type: str, of_skill: str, label: str, **runs: str
) -> AgentRow:
    """One agent type's (or skill's) row; `runs` filters the run list behind it."""
    group = group or Group()
    iterations, seconds, cost = _spreads(group)
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
    period: Period, since: datetime, now: datetime, by_hour: Mapping[str, Hour]
) -> list[DayRow]:
    """Spend per day in the site's time zone, summed from spend per UTC hour."""
    days: dict[date, list[float]] = {}
    day = timezone.localdate(since)
    while day <= timezone.localdate(now):
        days[day] = [0.0, 0]
        day += timedelta(days=1)
    for hour, counts in by_hour.items():
        if not counts.runs:
            continue
        totals = days.setdefault(timezone.localdate(hour_start(hour)), [0.0, 0])
        totals[0] += counts.cost
        totals[1] += counts.runs
    return [
        DayRow(day=day, cost=cost, runs=int(runs), href=run_list_url(period, day=day.isoformat()))
        for day, (cost, runs) in sorted(days.items())
    ]


def _user_rows(period: Period, owners: Mapping[int, list[float]]) -> list[UserRow]:
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


def _stuck_rows(period: Period, patterns: Mapping[str, int]) -> list[StuckRow]:
    """The patterns runs stopped for no progress were stuck in, most frequent first."""
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
    period: Period, skills: Mapping[str, Group], helpers: Mapping[str, Group]
) -> list[Recommendation]:
    site = SiteDefaults.config()
    operator = operator_limits()
    rows = []
    for skill in SKILLS:
        config = skill.config(site, operator)
        group = skills.get(skill.name) or Group()
        rows.append(
            Recommendation(
                agent_type=MAIN_AGENT,
                skill=skill.name,
                label=f"Oracle · {skill.title}",
                completed=group.completed_iterations.total(),
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
        group, limits = helpers.get(row.name) or Group(), row.limits()
        rows.append(
            Recommendation(
                agent_type=row.name,
                skill="",
                label=f"Helper · {row.name}",
                completed=group.completed_iterations.total(),
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
        events = tallies.events(filters.event, since)
        if span:
            events = events.filter(created_at__gte=span[0], created_at__lt=span[1])
        runs = Run.objects.filter(pk__in=events.values("run"))
    else:
        runs = tallies.finished_runs(since)
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
    events = tallies.helpers_finished(since).filter(data__agent_type=filters.agent)
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


# --- alerts (from ops, when it has them) ------------------------------------------------


def open_alerts() -> list[Any]:
    """The operator's alerts no one has acknowledged, newest first (from `ops.alerts`:
    objects with `pk`, `title`, `detail`, `created_at`); none where ops has no alerts."""
    try:
        from ops.alerts import open_alerts as ops_open_alerts
    except ImportError:  # pragma: no cover - an install without ops' alerts
        return []
    return list(ops_open_alerts()[:MAX_ALERTS])
