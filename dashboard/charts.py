"""The dashboard's charts as data for `static/js/dashboard.js`: labels, series and, for
every bar, the run list behind it. Colours are names of the page's CSS variables, so
the charts follow the theme. The tables beside them hold the same numbers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.utils import formats, timezone

from dashboard.filters import ANY_LIMIT
from dashboard.hits import ActionRow
from dashboard.periods import PERIODS
from dashboard.selectors import Figures

Chart = dict[str, Any]


def _series(label: str, data: list[float], links: list[str], colour: str) -> dict[str, Any]:
    return {"label": label, "data": data, "links": links, "colour": colour}


HIT_KINDS = (
    ("ended", "Ended by a limit", "--danger", {"reason": ANY_LIMIT}),
    ("paused", "Paused", "--warn-line", {"event": "paused"}),
    ("extended", "Extended", "--accent", {"event": "extended"}),
)


def _action_series(rows: Sequence[ActionRow]) -> list[dict[str, Any]]:
    """Runs ended by a limit, paused and extended, stacked, by limit action."""
    return [
        _series(label, [getattr(r, kind) for r in rows],
                [getattr(r, f"{kind}_href") for r in rows], colour)
        for kind, label, colour, _ in HIT_KINDS
    ]  # fmt: skip


def _hour_series(figures: Figures) -> list[dict[str, Any]]:
    """Limit hits per hour, stacked. A bar's runs are at `link` plus its `hour` (720
    hours in 30 days: the page builds those addresses)."""
    rows = figures.hours
    return [
        {
            **_series(label, [getattr(r, kind) for r in rows], [], colour),
            "link": figures.href(**filters),
            "keys": [r.hour for r in rows],
            "key": "hour",
        }
        for kind, label, colour, filters in HIT_KINDS
    ]


def chart_data(figures: Figures) -> dict[str, Chart]:
    """Every chart of the page, by the name its canvas has."""
    short = figures.period == PERIODS[0]
    agents = [row for row in figures.agents if row.runs]
    reasons, days, users, stuck = figures.reasons, figures.days, figures.users, figures.stuck
    return {
        "hits": {
            "kind": "bar",
            "stacked": True,
            "labels": [_hour_label(timezone.localtime(row.start), short) for row in figures.hours],
            "series": _hour_series(figures),
        },
        "reasons": {
            "kind": "bar",
            "horizontal": True,
            "labels": [row.label for row in reasons],
            "series": [
                _series("Runs", [r.runs for r in reasons], [r.href for r in reasons], "--accent")
            ],
            "colours": ["--danger" if row.is_limit else "--accent" for row in reasons],
        },
        "actions": {
            "kind": "bar",
            "stacked": True,
            "labels": [row.action for row in figures.actions],
            "series": _action_series(figures.actions),
        },
        "agents": {
            "kind": "bar",
            "labels": [row.label for row in agents],
            "series": [
                _series(
                    "Average iterations",
                    [round(r.iterations.average or 0, 1) for r in agents],
                    [r.href for r in agents],
                    "--accent",
                ),
                _series(
                    "95th percentile",
                    [r.iterations.p95 or 0 for r in agents],
                    [r.href for r in agents],
                    "--warn-line",
                ),
            ],
        },
        "days": {
            "kind": "bar",
            "money": True,
            "labels": [formats.date_format(row.day, "M j") for row in days],
            "series": [
                _series(
                    "Spend", [round(r.cost, 4) for r in days], [r.href for r in days], "--accent"
                )
            ],
        },
        "users": {
            "kind": "bar",
            "horizontal": True,
            "money": True,
            "labels": [row.username for row in users],
            "series": [
                _series(
                    "Spend", [round(r.cost, 4) for r in users], [r.href for r in users], "--accent"
                )
            ],
        },
        "stuck": {
            "kind": "bar",
            "horizontal": True,
            "labels": [_shortened(row.pattern) for row in stuck],
            "series": [
                _series("Runs", [r.runs for r in stuck], [r.href for r in stuck], "--danger")
            ],
        },
    }


def _hour_label(start: datetime, short: bool) -> str:
    return f"{start:%H}:00" if short else f"{start:%b} {start.day}, {start:%H}:00"


def _shortened(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
