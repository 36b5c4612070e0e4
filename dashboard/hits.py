"""Limit hits, by the hour and by the limit action in force: runs a limit ended (in
the hour they started), and runs paused or extended (in the hour it happened)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Count
from django.utils import timezone

from agents.config import LimitAction
from dashboard import counting
from dashboard.filters import ANY_LIMIT, run_list_url
from dashboard.periods import Period
from dashboard.tallies import period_tally
from dashboard.tally import Hour


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


def runs_with_event(kind: str, since: datetime) -> int:
    return int(counting.events(kind, since).aggregate(runs=Count("run", distinct=True))["runs"])


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
    hours = hour_rows(period, since, now, period_tally(since, now).hours)
    return [row for row in reversed(hours) if row.total]


def hour_rows(
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


def action_rows(
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
