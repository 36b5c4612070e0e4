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
- The context window's figures, per model, are those of the period's finished runs:
  their requests shortened to fit the window (`context.compacted`, by the model the
  event names), their requests refused as too long (`context.refused`), and the runs
  ended at `context_window` (by the model of their `run.started`).

The figures of a period add up the tallies of its whole UTC days, kept in the database
(`dashboard.tallies`), and count its two ends from the runs (`dashboard.counting`).
Each part of the page is answered by a module of its own: limit hits per hour and per
limit action (`hits`), agent types (`agent_types`), spend (`spend`), stuck patterns
(`stuck`), the context window per model (`context_window`), recommendations
(`recommendations`), and the runs behind a figure (`run_list`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from agents.state import LIMIT_REASONS
from agents.wording import reason_label
from dashboard.agent_types import AgentRow, agent_rows
from dashboard.context_window import ContextRow, context_rows, ended_href
from dashboard.filters import run_list_url
from dashboard.hits import ActionRow, HourRow, action_rows, hour_rows, runs_with_event
from dashboard.periods import Period
from dashboard.recommendations import Recommendation, recommendation_rows
from dashboard.spend import DayRow, UserRow, day_rows, user_rows
from dashboard.stuck import StuckRow, stuck_rows
from dashboard.tallies import period_tally

MAX_ALERTS = 20


@dataclass(frozen=True)
class ReasonRow:
    reason: str
    label: str
    runs: int
    share: float
    is_limit: bool
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
    context: list[ContextRow]
    recommendations: list[Recommendation]

    def href(self, **filters: Any) -> str:
        return run_list_url(self.period, **filters)

    @property
    def context_ended_href(self) -> str:
        return ended_href(self.period)

    @property
    def limit_share(self) -> float:
        return self.ended_by_limit / self.runs if self.runs else 0.0


def dashboard_figures(*, period: Period, now: datetime | None = None) -> Figures:
    """Every figure of the dashboard for the runs of `period` up to `now`."""
    now = now or timezone.now()
    since = period.since(now)
    counted = period_tally(since, now)
    runs = sum(counted.reasons.values())
    paused, extended = runs_with_event("paused", since), runs_with_event("extended", since)
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
        hours=hour_rows(period, since, now, counted.hours, links=False),
        actions=action_rows(period, counted.ended_by_action, paused, extended),
        agents=agent_rows(period, counted.skills, counted.helpers),
        days=day_rows(period, since, now, counted.hours),
        users=user_rows(period, counted.owners),
        stuck=stuck_rows(period, counted.stuck),
        context=context_rows(period, counted.context),
        recommendations=recommendation_rows(period, counted.skills, counted.helpers),
    )


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


# --- alerts (from ops, when it has them) ------------------------------------------------


def open_alerts() -> list[Any]:
    """The operator's alerts no one has acknowledged, newest first (from `ops.alerts`:
    objects with `pk`, `title`, `detail`, `created_at`); none where ops has no alerts."""
    try:
        from ops.alerts import open_alerts as ops_open_alerts
    except ImportError:  # pragma: no cover - an install without ops' alerts
        return []
    return list(ops_open_alerts()[:MAX_ALERTS])
