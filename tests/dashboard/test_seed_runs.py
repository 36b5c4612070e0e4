"""`manage.py seed_runs N`: runs spread as in life, which the dashboard can read, and the
dashboard's page time on them."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from chat.models import Conversation, Message, Run, RunEvent
from dashboard.periods import period_named
from dashboard.selectors import dashboard_figures

pytestmark = pytest.mark.django_db


def test_it_adds_runs_spread_over_users_skills_reasons_actions_and_days() -> None:
    out = io.StringIO()
    call_command("seed_runs", "600", "--no-measure", stdout=out)

    assert "Added 600 runs" in out.getvalue()
    assert Run.objects.count() == 600
    assert Conversation.objects.values("owner").distinct().count() >= 8
    assert set(Conversation.objects.values_list("skill", flat=True)) == {
        "default", "deep_research", "quick_answer",
    }  # fmt: skip
    reasons = dict(Run.objects.values_list("reason").annotate(n=models_count()))
    assert reasons["completed"] > 600 * 0.6
    assert len(reasons) >= 8
    assert RunEvent.objects.filter(type="run.started").count() == 600
    assert RunEvent.objects.filter(type="subagent.finished").exists()
    assert RunEvent.objects.filter(type="run.paused").exists()
    month = dashboard_figures(period=period_named("30d"))
    assert month.runs == 600
    assert len({row.day for row in month.days if row.runs}) >= 25
    assert month.stuck and month.stuck[0].runs >= 1
    assert {row.action for row in month.actions if row.ended} >= {"stop"}
    assert Message.objects.filter(role="user").count() == 600


def test_it_times_the_dashboard_for_each_period() -> None:
    out = io.StringIO()
    call_command("seed_runs", "50", stdout=out)
    lines = out.getvalue().splitlines()
    assert any(line.startswith("Dashboard page time") for line in lines)
    for label in ("24 hours", "7 days", "30 days"):
        assert any(label in line and line.endswith(" ms") for line in lines), label


def test_a_bad_count_is_an_error() -> None:
    with pytest.raises(SystemExit) as exit_:
        call_command("seed_runs", "-1", stderr=io.StringIO())
    assert exit_.value.code == 2


def models_count() -> object:
    from django.db.models import Count

    return Count("id")
