"""Who spent and when: spend per day (in the site's time zone) and the users who spent
the most."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from dashboard.filters import hour_start, run_list_url
from dashboard.periods import Period
from dashboard.tally import Hour

TOP_USERS = 10


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


def day_rows(
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


def user_rows(period: Period, owners: Mapping[int, list[float]]) -> list[UserRow]:
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
