"""The tallies of past days: a period's figures add up kept day tallies and its two ends,
and come out as if every run were counted; a day whose run finishes again is counted
again; seconds and cost percentiles are kept to three significant figures."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from chat.models import Run, RunStatus
from dashboard.counting import tally
from dashboard.models import DayTally
from dashboard.periods import period_named
from dashboard.selectors import dashboard_figures
from dashboard.tallies import keep_up, period_tally
from dashboard.tally import Tally, rounded_up
from tests.dashboard.conftest import NOW, Helper, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def month(alice: User, bob: User) -> None:
    """Runs on every few hours over 12 days, of both users, with every kind of figure."""
    reasons = ["completed", "max_iterations", "no_progress", "token_budget", "cancelled"]
    for n in range(60):
        make_run(
            alice if n % 3 else bob,
            skill=["default", "deep_research", "quick_answer"][n % 3],
            reason=reasons[n % len(reasons)],
            iterations=1 + n % 17,
            tokens=1_000 + 137 * n,
            cost_usd=0.001 * (n + 1),
            elapsed_ms=900 + 1_371 * n,
            ago=timedelta(hours=5 * n + 1),
            action=["stop", "pause", "extend", "warn"][n % 4],
            pattern=f"3 identical calls of f({n % 2}) in a row",
            paused=n % 7 == 0,
            extended=n % 11 == 0,
            helpers=(Helper("researcher", iterations=n % 5 + 1, elapsed_ms=2_345 * n),)
            if n % 4 == 0
            else (),
        )


def _as_counted(result: Tally) -> dict[str, object]:
    """A tally as JSON, with its sums of costs rounded (added in another order)."""
    data = result.to_json()
    data["owners"] = {k: [round(v[0], 9), v[1]] for k, v in data["owners"].items()}
    data["hours"] = {k: [runs, round(cost, 9), *rest]
                     for k, (runs, cost, *rest) in data["hours"].items()}  # fmt: skip
    for groups in (data["skills"], data["helpers"]):
        for group in groups.values():
            group["cost"] = round(group["cost"], 9)
    return data


def test_a_period_adds_up_to_what_its_runs_count(month: None) -> None:
    since = NOW - timedelta(days=30)
    assert not DayTally.objects.exists()
    kept = period_tally(since, NOW)
    assert DayTally.objects.count() >= 10  # the whole days between, kept
    assert _as_counted(kept) == _as_counted(tally(since))
    again = period_tally(since, NOW)  # now read from the kept days
    assert _as_counted(again) == _as_counted(tally(since))
    figures = dashboard_figures(period=period_named("30d"))
    assert figures.runs == 60
    assert sum(row.runs for row in figures.days) == 60


def test_a_day_whose_run_is_continued_and_finishes_again_is_counted_again(
    month: None, alice: User
) -> None:
    old = make_run(alice, iterations=3, cost_usd=2.0, ago=timedelta(days=4)).run
    before = dashboard_figures(period=period_named("7d"))
    assert DayTally.objects.filter(day=old.created_at.date()).exists()

    # Continue: queued again, then finished with more iterations and cost.
    Run.objects.filter(pk=old.pk).update(
        status=RunStatus.QUEUED, finished_at=None, queued_at=timezone.now()
    )
    running = dashboard_figures(period=period_named("7d"))
    assert running.runs == before.runs - 1
    assert running.spend == pytest.approx(before.spend - 2.0)

    Run.objects.filter(pk=old.pk).update(
        status=RunStatus.FINISHED, iterations=9, cost_usd=5.0, finished_at=timezone.now()
    )
    after = dashboard_figures(period=period_named("7d"))
    assert after.runs == before.runs
    assert after.spend == pytest.approx(before.spend + 3.0)


def test_seconds_and_cost_percentiles_keep_three_significant_figures(alice: User) -> None:
    assert [rounded_up(v) for v in (7, 999, 1_234, 1_240, 98_761)] == [
        7, 999, 1_240, 1_240, 98_800,
    ]  # fmt: skip
    for _ in range(20):
        make_run(alice, elapsed_ms=1_234, cost_usd=0.012345, ago=timedelta(days=3))
    row = next(r for r in dashboard_figures(period=period_named("7d")).agents if r.runs)
    assert row.seconds.p95 == pytest.approx(1.24)
    assert row.seconds.average == pytest.approx(1.234)  # averages are exact
    assert row.cost.p95 == pytest.approx(0.0124)


def test_the_sweeper_counts_missing_and_stale_days_before_a_page_needs_them(
    month: None,
) -> None:
    now = timezone.now()
    counted = keep_up(now, timedelta(days=30))
    assert counted == DayTally.objects.count() >= 10
    assert keep_up(now, timedelta(days=30)) == 0  # nothing changed since

    old = Run.objects.filter(created_at__lt=now - timedelta(days=3)).first()
    assert old is not None
    Run.objects.filter(pk=old.pk).update(finished_at=timezone.now())  # finished again
    assert keep_up(now, timedelta(days=30)) == 1


def test_days_before_the_first_run_are_kept_empty_and_the_figures_stay_right(
    alice: User, django_assert_max_num_queries: Any
) -> None:
    """A new install: the sweeper's first round keeps 90 days of tallies. The days
    before any run cost no counting, and the period's figures are those of the runs."""
    for days in (2, 3, 3):
        make_run(alice, ago=timedelta(days=days), cost_usd=0.5)
    now = NOW + timedelta(hours=1)

    with django_assert_max_num_queries(400):  # 90 days counted in full took about 1,000
        counted = keep_up(now, timedelta(days=90))

    assert counted == DayTally.objects.count() >= 80
    since = now - timedelta(days=90)
    kept, fresh = period_tally(since, now), tally(since)
    assert kept.reasons == fresh.reasons == {"completed": 3}
    assert kept.owners == fresh.owners == {alice.pk: [1.5, 3]}
