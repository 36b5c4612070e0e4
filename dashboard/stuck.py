"""Where runs got stuck: the patterns the runs stopped for no progress repeated (their
System notice's `pattern`), most frequent first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.state import TerminationReason
from dashboard.filters import run_list_url
from dashboard.periods import Period

TOP_PATTERNS = 10


@dataclass(frozen=True)
class StuckRow:
    pattern: str
    runs: int
    href: str


def stuck_rows(period: Period, patterns: Mapping[str, int]) -> list[StuckRow]:
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
