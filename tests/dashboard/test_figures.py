"""The dashboard's figures, against runs made here: every number as worked out by hand."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.models import RunEvent
from dashboard.periods import period_named
from dashboard.selectors import Figures, dashboard_figures
from tests.dashboard.conftest import NOW, Helper, make_run

pytestmark = pytest.mark.django_db
STUCK = "3 identical calls of search_documents(owls) in a row"


@pytest.fixture
def runs(alice: User, bob: User) -> None:
    """Nine finished runs in the last day, one of eight days ago, one still running."""
    h = timedelta(hours=1)
    make_run(alice, iterations=2, tokens=2_000, cost_usd=0.02, elapsed_ms=2_000, ago=2 * h)
    make_run(alice, iterations=4, tokens=4_000, cost_usd=0.04, elapsed_ms=4_000, ago=2 * h)
    make_run(alice, iterations=15, tokens=30_000, cost_usd=0.30, elapsed_ms=30_000, ago=3 * h,
             reason="max_iterations")  # fmt: skip
    make_run(alice, iterations=6, tokens=6_000, cost_usd=0.06, elapsed_ms=6_000, ago=3 * h,
             reason="no_progress", pattern=STUCK)  # fmt: skip
    make_run(bob, iterations=5, tokens=5_000, cost_usd=0.05, elapsed_ms=5_000, ago=3 * h,
             reason="no_progress", pattern=STUCK)  # fmt: skip
    make_run(bob, iterations=3, tokens=9_000, cost_usd=1.00, elapsed_ms=120_000, ago=5 * h,
             reason="timeout", action="pause", paused=True)  # fmt: skip
    make_run(bob, iterations=30, tokens=40_000, cost_usd=0.50, elapsed_ms=60_000, ago=5 * h,
             skill="deep_research", reason="turn_budget_exhausted", action="extend",
             extended=True,
             helpers=(Helper("researcher", iterations=4, tokens=8_000, cost_usd=0.008,
                             elapsed_ms=8_000),
                      Helper("researcher", reason="max_iterations", iterations=30,
                             tokens=20_000, cost_usd=0.02, elapsed_ms=50_000)))  # fmt: skip
    make_run(bob, iterations=1, tokens=500, cost_usd=0.001, elapsed_ms=900, ago=6 * h,
             skill="quick_answer", reason="cancelled")  # fmt: skip
    make_run(bob, iterations=2, tokens=1_500, cost_usd=0.003, elapsed_ms=1_500, ago=6 * h,
             skill="quick_answer")  # fmt: skip
    make_run(alice, iterations=9, cost_usd=9.0, ago=timedelta(days=8), reason="max_iterations")
    make_run(alice, iterations=7, cost_usd=7.0, ago=h, status="running")


def figures(key: str) -> Figures:
    return dashboard_figures(period=period_named(key))


def test_it_counts_the_periods_finished_runs_by_reason(runs: None) -> None:
    day = figures("24h")
    assert day.runs == 9
    assert {row.reason: row.runs for row in day.reasons} == {
        "completed": 3,
        "no_progress": 2,
        "max_iterations": 1,
        "timeout": 1,
        "turn_budget_exhausted": 1,
        "cancelled": 1,
    }
    assert day.reasons[0].reason == "completed"
    assert day.reasons[0].share == pytest.approx(3 / 9)
    assert day.ended_by_limit == 5  # not the completed or the cancelled ones
    assert figures("7d").runs == 9
    assert figures("30d").runs == 10  # the one of eight days ago
    assert {r.reason: r.runs for r in figures("30d").reasons}["max_iterations"] == 2


def test_it_counts_limit_hits_by_hour_and_by_action(runs: None) -> None:
    day = figures("24h")
    assert (day.paused, day.extended) == (1, 1)
    hits = {row.start: (row.ended, row.paused, row.extended) for row in day.hours if row.total}

    def hour(hours_ago: int) -> datetime:
        return (NOW - timedelta(hours=hours_ago)).replace(minute=0, second=0, microsecond=0)

    assert hits == {hour(3): (3, 0, 0), hour(5): (2, 1, 1)}
    assert len(day.hours) in (24, 25)
    actions = {row.action: (row.ended, row.paused, row.extended) for row in day.actions}
    assert actions == {
        "stop": (3, 0, 0),
        "pause": (1, 1, 0),
        "extend": (1, 0, 1),
        "warn": (0, 0, 0),
    }


def test_a_wait_for_the_users_approval_is_no_limit_hit(alice: User) -> None:
    waited = make_run(alice, action="pause").run
    paused = RunEvent.objects.create(
        run=waited, seq=10, type="run.paused", data={"type": "run.paused", "reason": "approval"}
    )
    RunEvent.objects.filter(pk=paused.pk).update(created_at=waited.created_at)
    make_run(alice, reason="timeout", action="pause", paused=True)

    day = figures("24h")

    assert day.paused == 1  # the timeout's pause only
    assert {row.action: row.paused for row in day.actions}["pause"] == 1


def test_it_gives_average_and_95th_percentile_per_agent_type_and_skill(runs: None) -> None:
    rows = {(row.agent_type, row.skill): row for row in figures("24h").agents}
    default = rows[("oracle", "default")]
    assert default.runs == 6
    assert default.limit_hits == 4
    assert default.iterations.average == pytest.approx((2 + 4 + 15 + 6 + 5 + 3) / 6)
    assert default.iterations.p95 == 15  # nearest rank: the 6th of 6
    assert default.seconds.average == pytest.approx(167 / 6)
    assert default.seconds.p95 == pytest.approx(120.0)
    assert default.cost.average == pytest.approx(1.47 / 6)
    assert default.cost.p95 == pytest.approx(1.00)
    assert default.total_cost == pytest.approx(1.47)
    quick = rows[("oracle", "quick_answer")]
    assert (quick.runs, quick.iterations.average, quick.iterations.p95) == (2, 1.5, 2)
    researcher = rows[("researcher", "")]
    assert (researcher.runs, researcher.limit_hits) == (2, 1)
    assert researcher.iterations.average == 17
    assert researcher.iterations.p95 == 30
    assert researcher.seconds.p95 == pytest.approx(50.0)
    assert researcher.cost.p95 == pytest.approx(0.02)
    assert rows[("summarizer", "")].runs == 0
    assert rows[("summarizer", "")].iterations.p95 is None


def test_it_adds_up_spend_per_day_and_per_user(runs: None) -> None:
    day = figures("24h")
    assert day.spend == pytest.approx(0.02 + 0.04 + 0.30 + 0.06 + 0.05 + 1.0 + 0.5 + 0.004)
    assert sum(row.cost for row in day.days) == pytest.approx(day.spend)
    assert sum(row.runs for row in day.days) == 9
    users = [(row.username, round(row.cost, 4), row.runs) for row in day.users]
    assert users == [("bob", 1.554, 5), ("alice", 0.42, 4)]
    month = figures("30d")
    assert [row.username for row in month.users] == ["alice", "bob"]  # the 9 dollars
    assert len(month.days) in (30, 31)


def test_it_ranks_the_stuck_patterns(runs: None, alice: User) -> None:
    make_run(alice, reason="no_progress", pattern="the same 2 calls (a(1), b(2)) 3 times over")
    stuck = [(row.pattern, row.runs) for row in figures("24h").stuck]
    assert stuck == [(STUCK, 2), ("the same 2 calls (a(1), b(2)) 3 times over", 1)]


def test_the_page_shows_the_figures_and_links_each_to_its_runs(
    runs: None, staff_client: Client
) -> None:
    page = staff_client.get("/dashboard/?period=24h").content.decode()
    assert "Runs started in the last 24 hours" in page
    assert 'aria-current="page">24 hours</a>' in page
    assert '<span class="dash-card-figure">9</span>' in page
    assert "/dashboard/runs/?period=24h&amp;reason=no_progress" in page
    assert "/dashboard/runs/?period=24h&amp;user=" in page
    assert "/dashboard/runs/?period=24h&amp;agent=researcher" in page
    assert "/dashboard/runs/?period=24h&amp;reason=limit&amp;action=pause" in page
    assert STUCK in page
    assert "$1.55" in page  # bob's spend
    assert 'id="dashboard-charts"' in page
    assert "chart-4.6.1.umd.min.js" in page
    assert "The secret answer." not in page and "What is the answer?" not in page


def test_an_empty_period_has_no_figures_but_a_page(staff_client: Client) -> None:
    response = staff_client.get("/dashboard/?period=30d")
    assert response.status_code == 200
    page = response.content.decode()
    assert "No finished runs in this period." in page
    assert "No run got stuck in this period." in page
