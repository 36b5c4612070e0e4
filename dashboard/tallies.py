"""The tallies of past UTC days, kept in the database so that a period's figures read a
few dozen rows, not every run of the period.

A period (the last 24 hours, 7 days, 30 days) is its whole UTC days in between, read
from their `DayTally` rows, and the parts of a day at either end, counted from the runs.
A day is tallied once it has ended (and a few minutes more, so that what was written
just before midnight is committed), by the worker's sweeper or else by the first page
that needs it. Its tally is counted again when it is stale: one of the day's runs
finished or was queued again (Continue, Resume) since it was counted.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.utils import timezone

from chat.models import Run
from dashboard.aggregates import UtcHour, hour_key
from dashboard.counting import tally
from dashboard.filters import hour_start
from dashboard.models import DayTally
from dashboard.periods import PERIODS
from dashboard.tally import VERSION, Tally
from ops.alerts import Throttle

SETTLE = timedelta(minutes=5)  # a day is tallied this long after it ends
COMMITTED = timedelta(minutes=1)  # what was written this long ago is committed
KEEP_UP_EVERY_SECONDS = 60


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
