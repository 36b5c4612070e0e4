"""The dashboard's "Context window": per model, in the period's finished runs, the requests
shortened to fit the model's window (and the summaries made), the requests refused as
too long, and the runs that ended at `context_window`; each figure links to its runs."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from chat.models import Message, Run, RunEvent
from dashboard.context_window import ContextRow
from dashboard.counting import tally
from dashboard.models import DayTally
from dashboard.periods import period_named
from dashboard.seeding_context import MODELS
from dashboard.selectors import dashboard_figures
from dashboard.tallies import period_tally
from dashboard.tally import VERSION, Tally
from tests.dashboard.conftest import NOW, make_run

pytestmark = pytest.mark.django_db
MINI, LOCAL, HAIKU = "openai/gpt-4o-mini", "ollama/llama3.1:8b", "anthropic/claude-3-5-haiku"


def context_run(
    owner: User,
    model: str,
    *,
    compactions: tuple[bool, ...] = (),  # whether each summarised
    refusals: int = 0,
    ago: timedelta = timedelta(hours=2),
    **made: Any,
) -> Run:
    """A run on `model` whose requests were shortened (`compactions`) or refused as too
    long (`refusals`) a minute after it started, as the engine tells it."""
    run = make_run(owner, ago=ago, **made).run
    started = RunEvent.objects.get(run=run, type="run.started")
    started.data = {**started.data, "model": model}
    started.save()
    events: list[dict[str, Any]] = [
        {"type": "context.refused", "model": model, "window": 8192, "requested": 9_300}
        for _ in range(refusals)
    ]
    events += [
        {
            "type": "context.compacted",
            "model": model,
            "window": 8192,
            "before": 31_400,
            "after": 5_200,
            "summarised": summarised,
            "stubbed": 0 if summarised else 2,
            "cut": 0,
            "summary": "Owls." if summarised else "",
            "covers": 2,
            "text": "Earlier messages were summarised to fit the model's context.",
        }
        for summarised in compactions
    ]
    for seq, data in enumerate(events, start=100):
        event = RunEvent.objects.create(run=run, seq=seq, type=data["type"], data=data)
        RunEvent.objects.filter(pk=event.pk).update(
            created_at=run.created_at + timedelta(minutes=1)
        )
    return run


@pytest.fixture
def runs(alice: User, bob: User) -> None:
    """Runs of three models in the last day, one of eight days ago, one still running."""
    context_run(alice, LOCAL, compactions=(True, True, False), refusals=1)
    context_run(bob, LOCAL, compactions=(False,), refusals=2, reason="context_window")
    context_run(bob, LOCAL, reason="context_window", ago=timedelta(hours=5))
    context_run(alice, MINI, compactions=(True,))
    context_run(alice, MINI)  # its window was never reached
    context_run(bob, HAIKU, reason="completed")
    context_run(alice, MINI, compactions=(True, True), ago=timedelta(days=8))
    context_run(alice, MINI, compactions=(True,), status="running")  # not finished: not yet


def rows(key: str) -> list[ContextRow]:
    return dashboard_figures(period=period_named(key)).context


def test_it_counts_per_model_the_compactions_summaries_refusals_and_runs_ended(
    runs: None,
) -> None:
    day = [(r.model, r.compacted, r.summarised, r.refused, r.ended) for r in rows("24h")]

    assert day == [  # the most runs ended first; a model untouched has no row
        (LOCAL, 4, 2, 3, 2),
        (MINI, 1, 1, 0, 0),
    ]
    month = {r.model: (r.compacted, r.summarised, r.refused, r.ended) for r in rows("30d")}
    assert month[MINI] == (3, 3, 0, 0)  # with the run of eight days ago
    assert month[LOCAL] == (4, 2, 3, 2)


def test_a_period_of_kept_days_adds_up_to_what_its_runs_count(alice: User, bob: User) -> None:
    for days in range(1, 12):
        context_run(
            alice,
            LOCAL,
            compactions=(True, False)[: days % 3],
            refusals=days % 2,
            ago=timedelta(days=days, hours=3),
            reason="context_window" if days % 4 == 0 else "completed",
        )
        context_run(bob, MINI, compactions=(True,), ago=timedelta(days=days, hours=7))
    since = NOW - timedelta(days=30)

    kept = period_tally(since, NOW)

    assert DayTally.objects.count() >= 10
    counted = tally(since)
    assert kept.context == counted.context
    assert counted.context[LOCAL].refused == 6
    assert counted.context[LOCAL].ended == 2
    assert counted.context[MINI].compacted == counted.context[MINI].summarised == 11
    assert period_tally(since, NOW).context == counted.context  # read from the kept days


def test_a_day_kept_before_the_context_window_was_counted_is_counted_again(alice: User) -> None:
    run = context_run(alice, LOCAL, compactions=(True,), ago=timedelta(days=3))
    day = run.created_at.date()
    old = Tally().to_json()
    del old["context"]
    DayTally.objects.create(day=day, counted_at=NOW, data={**old, "version": VERSION - 1})

    (row,) = rows("7d")

    assert (row.model, row.compacted, row.summarised) == (LOCAL, 1, 1)
    assert DayTally.objects.get(day=day).data["version"] == VERSION


def test_the_section_shows_each_model_and_links_each_figure_to_its_runs(
    runs: None, staff_client: Client
) -> None:
    page = staff_client.get("/dashboard/?period=24h").content.decode()

    assert '<a href="#context">Context window</a>' in page
    assert '<h2 id="context-title">Context window</h2>' in page
    assert f"<code>{LOCAL}</code>" in page and f"<code>{MINI}</code>" in page
    assert HAIKU not in page
    model = "model=ollama%2Fllama3.1%3A8b"
    compacted = f'href="/dashboard/runs/?period=24h&amp;{model}&amp;event=compacted">4</a>'
    assert f"{compacted} · 2 </td>" in " ".join(page.split())  # 4 compactions, 2 summaries
    assert f'href="/dashboard/runs/?period=24h&amp;{model}&amp;event=refused">3</a>' in page
    ended = f"/dashboard/runs/?period=24h&amp;{model}&amp;reason=context_window"
    assert f'href="{ended}">2</a>' in page
    assert 'href="/dashboard/runs/?period=24h&amp;reason=context_window"' in page  # any model
    assert "Owls." not in page  # never a summary of what users wrote


def test_a_period_the_window_never_touched_says_so(staff_client: Client, alice: User) -> None:
    context_run(alice, MINI)

    page = staff_client.get("/dashboard/?period=24h").content.decode()

    assert "No request reached a model's context window in this period." in page


def test_the_run_list_gives_the_runs_of_a_model_that_had_each_event_or_ended_at_the_window(
    runs: None, staff_client: Client
) -> None:
    def listed(query: str) -> str:
        response = staff_client.get(f"/dashboard/runs/?period=24h&{query}")
        assert response.status_code == 200, response.content
        return response.content.decode()

    compacted = listed("model=ollama/llama3.1:8b&event=compacted")
    assert compacted.count('class="run-row') == 2
    assert "A request shortened to fit the context window" in compacted
    assert "Model: ollama/llama3.1:8b" in compacted
    assert listed("model=ollama/llama3.1:8b&event=refused").count('class="run-row') == 2
    assert listed("event=refused").count('class="run-row') == 2
    ended = listed("model=ollama/llama3.1:8b&reason=context_window")
    assert ended.count('class="run-row') == 2
    assert listed("model=openai/gpt-4o-mini&reason=context_window").count('class="run-row') == 0
    assert listed("model=openai/gpt-4o-mini").count('class="run-row') == 2
    helper = staff_client.get("/dashboard/runs/?period=24h&agent=researcher&model=x")
    assert helper.status_code == 400


def test_seeded_runs_have_models_and_their_context_windows_events() -> None:
    call_command("seed_runs", "1500", "--no-measure", stdout=io.StringIO())

    figures = rows("30d")
    assert {row.model for row in figures} <= {model.name for model in MODELS}  # all named
    assert 0 < sum(row.summarised for row in figures) < sum(row.compacted for row in figures)
    assert sum(row.refused for row in figures) > 0
    ended = Run.objects.filter(reason="context_window").count()
    assert sum(row.ended for row in figures) == ended > 0
    notices = Message.objects.filter(role="system", metadata__has_key="context")
    assert notices.count() == RunEvent.objects.filter(type="context.compacted").count()
