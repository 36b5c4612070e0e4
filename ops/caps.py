"""Daily spending caps beyond one run: one per user and one for the site (SPEC section 9).

A day is the UTC day. Today's spend is the cost of the runs (the user's, or everyone's
for the site) that started or finished today, so a run that crosses midnight counts
whole for the new day. When a worker claims a run, the run's cost cap becomes the
smallest of the operator's per-run cap and what is left of each daily cap, named for
the System message; with nothing left the engine ends the run before its first call.

Runs claimed at the same moment each see what was left before the others spend it, so
together they can pass a cap by what they spend at once: a cap, not an exact ledger.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet, Sum
from django.utils import timezone

from agents.config import OperatorLimits
from agents.state import AgentState, LimitHit, Metric, TerminationReason
from agents.wording import number, stop_notice
from chat.models import Run
from ops.models import SpendCaps

RESETS = "it resets at 00:00 UTC"


def day_start(now: datetime) -> datetime:
    """00:00 UTC of `now`'s UTC day."""
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _spent_today(runs: QuerySet[Run], now: datetime) -> float:
    start = day_start(now)
    today = runs.filter(Q(started_at__gte=start) | Q(finished_at__gte=start))
    return float(today.aggregate(total=Sum("cost_usd"))["total"] or 0.0)


def user_spend_today(user: User, *, now: datetime | None = None) -> float:
    """What `user`'s runs have cost today (UTC)."""
    return _spent_today(Run.objects.filter(conversation__owner=user), now or timezone.now())


def site_spend_today(*, now: datetime | None = None) -> float:
    """What every run has cost today (UTC)."""
    return _spent_today(Run.objects.all(), now or timezone.now())


def run_cost_limits(
    operator: OperatorLimits,
    *,
    run: Run,
    state: AgentState | None = None,
    action: str = "start",
    now: datetime | None = None,
) -> OperatorLimits:
    """The operator's limits for `run` with its cost cap lowered to what is left of the
    daily caps, and the name of the cap that is then the lowest (the user's on a tie).

    `run` itself counts with what it spent before this claim's round: a continued run
    starts a round from 0; a resumed one, or one going on after the user's approval,
    goes on counting its round (`state.round`)."""
    same_round = action in ("resume", "approve")
    in_this_round = state.round.cost_usd if state is not None and same_round else 0.0
    return daily_cost_limits(
        operator,
        owner_id=run.conversation.owner_id,
        runs=Run.objects.exclude(pk=run.pk),
        spent_before=max(0.0, run.cost_usd - in_this_round),
        now=now,
    )


def daily_cost_limits(
    operator: OperatorLimits,
    *,
    owner_id: int | None,
    runs: QuerySet[Run] | None = None,
    spent_before: float = 0.0,
    caps: SpendCaps | None = None,
    now: datetime | None = None,
) -> OperatorLimits:
    """The operator's limits with the cost cap lowered to what is left today of the
    user's daily cap (none without a user: `ask` with no `--user`) and the site's.
    `runs` are the runs counted (all of them unless told); `spent_before` is added;
    `caps` are the staff's (read from the database unless given)."""
    caps = caps or SpendCaps.current()
    user_cap = caps.user_cap() if owner_id is not None else None
    site_cap = caps.site_cap()
    if user_cap is None and site_cap is None:
        return operator
    now = now or timezone.now()
    runs = Run.objects.all() if runs is None else runs
    left: list[tuple[float, str]] = []
    if user_cap is not None:
        spent = _spent_today(runs.filter(conversation__owner_id=owner_id), now) + spent_before
        left.append(
            (user_cap - spent, f"the daily spending cap for your account ({_usd(user_cap)})")
        )
    if site_cap is not None:
        spent = _spent_today(runs, now) + spent_before
        left.append((site_cap - spent, f"the site's daily spending cap ({_usd(site_cap)})"))
    remaining, name = min(left, key=lambda cap: cap[0])  # min keeps the first of equals
    remaining = round(max(0.0, remaining), 6)  # a float sum's crumbs are nothing left
    if remaining >= operator.max_cost_usd:
        return operator
    return replace(operator, max_cost_usd=remaining, cost_cap_name=name, cost_cap_note=RESETS)


def used_up_cap(owner_id: int, *, now: datetime | None = None) -> str | None:
    """What to tell a user who asks for another round while the daily spending cap of
    their account or of the site is used up ("The daily spending cap for your account
    ($2.00) is used up; it resets at 00:00 UTC."); None while both have money left."""
    limits = daily_cost_limits(OperatorLimits(), owner_id=owner_id, now=now)
    if not limits.cost_cap_name or limits.max_cost_usd > 0:
        return None
    hit = LimitHit(Metric.COST, 0.0, 0.0, detail=limits.cost_cap_note, cap=limits.cost_cap_name)
    return stop_notice(TerminationReason.COST_BUDGET, hit)


def _usd(amount: float) -> str:
    return number(Metric.COST, amount)
