"""/metrics counts the context window's events per model: requests shortened to fit it
(summarised, or shortened without a summary) and requests refused as too long."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.models import RunStatus
from ops import metrics
from ops.metrics import EventTally
from tests.ops.test_metrics import STARTED, Clock, a_run, events, limit_event, scrape, value

MINI, LOCAL = "openai/gpt-4o-mini", "ollama/llama3.1:8b"


def compacted(model: str, *, summarised: bool) -> dict[str, Any]:
    return {
        "type": "context.compacted",
        "model": model,
        "window": 8192,
        "before": 31_400,
        "after": 5_200,
        "summarised": summarised,
        "stubbed": 0 if summarised else 2,
        "cut": 0,
        "summary": "Owls." if summarised else "",
        "covers": 3,
        "text": "Shortened.",
    }


def refused(model: str) -> dict[str, Any]:
    return {
        "type": "context.refused",
        "model": model,
        "window": 8192,
        "requested": 9_300,
        "ratio": 1.0,
        "status": 400,
    }


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(metrics.COLLECTOR, "tally", EventTally(clock))
    return clock


@pytest.fixture
def staff_client(client: Client, db: None) -> Client:
    client.force_login(User.objects.create_user("root", is_staff=True))
    return client


def test_compactions_are_counted_per_model_and_kind_and_refusals_per_model(
    staff_client: Client, alice: User, clock: Clock
) -> None:
    long_talk = a_run(alice, RunStatus.FINISHED, reason="completed")
    events(
        long_talk,
        {**STARTED, "model": MINI},
        {"type": "context.used", "prompt_tokens": 7_000, "window": 8192},
        refused(MINI),
        compacted(MINI, summarised=True),
        compacted(MINI, summarised=True),
        compacted(MINI, summarised=False),
        {"type": "run.finished", "reason": "completed"},
    )
    too_big = a_run(alice, RunStatus.FINISHED, reason="context_window")
    events(
        too_big,
        {**STARTED, "model": LOCAL},
        compacted(LOCAL, summarised=False),
        refused(LOCAL),
        refused(LOCAL),
        {"type": "run.finished", "reason": "context_window", "metric": "context"},
    )

    samples = scrape(staff_client)

    compactions = "oracle_context_compactions_total"
    assert value(samples, compactions, model=MINI, kind="summarised") == 2
    assert value(samples, compactions, model=MINI, kind="shortened") == 1
    assert value(samples, compactions, model=LOCAL, kind="shortened") == 1
    assert (compactions, frozenset({("model", LOCAL), ("kind", "summarised")})) not in samples
    assert value(samples, "oracle_context_refusals_total", model=MINI) == 1
    assert value(samples, "oracle_context_refusals_total", model=LOCAL) == 2
    assert value(samples, "oracle_runs_finished_total", reason="context_window") == 1
    # As the limit log writes them; a call's size (`context.used`) is no limit event.
    assert limit_event(samples, "context.compacted") == 4
    assert limit_event(samples, "context.refused") == 3
    assert not [name for name, _ in samples if "context_used" in name]
    assert value(samples, "oracle_runs_started_total") == 2  # whatever their models


def test_they_go_on_counting_as_events_settle(
    staff_client: Client, alice: User, clock: Clock
) -> None:
    run = a_run(alice, RunStatus.RUNNING)
    events(run, compacted(MINI, summarised=True), refused(MINI))
    seen = [scrape(staff_client)]
    clock.now += 61  # what was read settles
    seen.append(scrape(staff_client))
    events(run, compacted(MINI, summarised=True))
    seen.append(scrape(staff_client))

    summaries = [
        value(s, "oracle_context_compactions_total", model=MINI, kind="summarised") for s in seen
    ]
    assert summaries == [1, 1, 2]
    assert [value(s, "oracle_context_refusals_total", model=MINI) for s in seen] == [1, 1, 1]


def test_with_no_such_event_the_families_are_there_and_empty(
    staff_client: Client, clock: Clock
) -> None:
    text = staff_client.get("/metrics").content.decode()

    assert "# TYPE oracle_context_compactions_total counter" in text
    assert "# TYPE oracle_context_refusals_total counter" in text
    assert "oracle_context_compactions_total{" not in text
