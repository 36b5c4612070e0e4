"""The periods the dashboard looks back over, chosen with `?period=`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Period:
    """The runs started in the last `span`, up to now."""

    key: str  # as in the query string
    label: str
    span: timedelta

    def since(self, now: datetime) -> datetime:
        return now - self.span


PERIODS = (
    Period("24h", "24 hours", timedelta(hours=24)),
    Period("7d", "7 days", timedelta(days=7)),
    Period("30d", "30 days", timedelta(days=30)),
)
DEFAULT_PERIOD = PERIODS[1]
_BY_KEY = {period.key: period for period in PERIODS}


class UnknownPeriod(ValueError):
    """`?period=` named no period; the message says which there are."""


def period_named(key: str | None) -> Period:
    """The period called `key` (the default when it is None or empty)."""
    if not key:
        return DEFAULT_PERIOD
    try:
        return _BY_KEY[key]
    except KeyError:
        choices = ", ".join(f"{p.key} ({p.label})" for p in PERIODS)
        raise UnknownPeriod(f"There is no period {key!r}: choose {choices}.") from None
