"""/metrics: what the runs did, for Prometheus, read from the database at each scrape;
for staff and the operator's token only."""

from __future__ import annotations

import itertools
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.test.utils import override_settings
from prometheus_client.parser import text_string_to_metric_families

from agents.testing.fake_server import FakeServer
from chat.models import Conversation, Run, RunEvent, RunStatus
from ops import metrics
from ops.metrics import EventTally
from tests import processes
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.e2e.test_websocket import log_in
from tests.stack import OracleStack

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
TOKEN = "metrics-" + "x" * 32


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """A fresh tally for each test (each test has a database of its own), on a clock the
    test moves."""
    clock = Clock()
    monkeypatch.setattr(metrics.COLLECTOR, "tally", EventTally(clock))
    return clock


@pytest.fixture
def staff(db: None) -> User:
    return User.objects.create_user("root", password="correct horse battery", is_staff=True)


def parse(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def scrape(client: Client, **headers: str) -> Samples:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return parse(response.content.decode())


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def limit_event(samples: Samples, event: str, metric: str = "", severity: str = "",
                reason: str = "") -> float:  # fmt: skip
    labels = {"event": event, "metric": metric, "severity": severity, "reason": reason}
    return value(samples, "oracle_limit_events_total", **labels)


_seqs = itertools.count(1)


def a_run(owner: User, status: str, **fields: Any) -> Run:
    conversation = Conversation.objects.create(owner=owner)
    return Run.objects.create(conversation=conversation, status=status, **fields)


def events(run: Run, *kinds: dict[str, Any]) -> None:
    RunEvent.objects.bulk_create(
        RunEvent(run=run, seq=next(_seqs), type=kind["type"], data=kind) for kind in kinds
    )


STARTED = {"type": "run.started"}
WARNING = {"type": "system.notice", "severity": "warning", "metric": "iterations",
           "value": 10, "limit": 15}  # fmt: skip


def two_finished_runs(owner: User) -> None:
    done = a_run(owner, RunStatus.FINISHED, reason="completed", tokens=100, cost_usd=0.01,
                 elapsed_ms=2_000)  # fmt: skip
    events(done, STARTED, {"type": "assistant.delta", "text": "Hi"},
           {"type": "run.finished", "reason": "completed"})  # fmt: skip
    stopped = a_run(owner, RunStatus.FINISHED, reason="max_iterations", tokens=900,
                    cost_usd=0.09, elapsed_ms=45_000)  # fmt: skip
    events(
        stopped,
        STARTED,
        WARNING,
        {"type": "subagent.finished", "agent_type": "researcher", "reason": "completed"},
        {"type": "subagent.finished", "agent_type": "summarizer", "reason": "token_budget"},
        {"type": "system.notice", "severity": "warning", "metric": "iterations", "value": 15,
         "limit": 15, "reason": "max_iterations"},
        {"type": "run.finished", "reason": "max_iterations"},
    )  # fmt: skip


@pytest.mark.usefixtures("clock")
def test_it_counts_runs_limit_events_tokens_cost_and_durations(
    client: Client, staff: User, alice: User
) -> None:
    two_finished_runs(alice)
    a_run(alice, RunStatus.RUNNING, tokens=50, cost_usd=0.005)
    a_run(alice, RunStatus.PAUSED)
    a_run(alice, RunStatus.QUEUED)
    a_run(alice, RunStatus.QUEUED)
    client.force_login(staff)

    samples = scrape(client)

    assert value(samples, "oracle_runs_started_total") == 2
    assert value(samples, "oracle_runs_finished_total", reason="completed") == 1
    assert value(samples, "oracle_runs_finished_total", reason="max_iterations") == 1
    assert limit_event(samples, "system.notice", "iterations", "warning") == 1
    assert limit_event(samples, "system.notice", "iterations", "warning", "max_iterations") == 1
    assert limit_event(samples, "run.finished", reason="max_iterations") == 1
    assert limit_event(samples, "subagent.finished", reason="token_budget") == 1
    assert limit_event(samples, "subagent.finished", reason="completed") == 0  # no limit
    assert value(samples, "oracle_tokens_total") == 1_050
    assert value(samples, "oracle_cost_usd_total") == pytest.approx(0.105)
    assert value(samples, "oracle_runs_active", status="running") == 1
    assert value(samples, "oracle_runs_active", status="paused") == 1
    assert value(samples, "oracle_runs_queued") == 2
    duration = "oracle_run_duration_seconds"
    assert value(samples, f"{duration}_bucket", le="1.0") == 0
    assert value(samples, f"{duration}_bucket", le="5.0") == 1
    assert value(samples, f"{duration}_bucket", le="30.0") == 1
    assert value(samples, f"{duration}_bucket", le="60.0") == 2
    assert value(samples, f"{duration}_bucket", le="+Inf") == 2
    assert value(samples, f"{duration}_count") == 2
    assert value(samples, f"{duration}_sum") == 47.0


@pytest.mark.usefixtures("clock")
def test_a_scrape_takes_three_queries(
    client: Client, alice: User, django_assert_max_num_queries: Any
) -> None:
    two_finished_runs(alice)

    with override_settings(ORACLE_METRICS_TOKEN=TOKEN), django_assert_max_num_queries(3):
        scrape(client, Authorization=f"Bearer {TOKEN}")


def test_events_are_counted_once_as_they_settle_and_later_ones_added(
    client: Client, staff: User, alice: User, clock: Clock
) -> None:
    client.force_login(staff)
    two_finished_runs(alice)
    started = [value(scrape(client), "oracle_runs_started_total")]
    for _ in range(3):  # each scrape a minute apart: what was read settles, once
        clock.now += 61
        started.append(value(scrape(client), "oracle_runs_started_total"))
    events(a_run(alice, RunStatus.RUNNING), STARTED)
    started.append(value(scrape(client), "oracle_runs_started_total"))

    assert started == [2, 2, 2, 2, 3]


def test_an_event_written_late_with_a_lower_id_is_still_counted(
    client: Client, staff: User, alice: User, clock: Clock
) -> None:
    client.force_login(staff)
    run = a_run(alice, RunStatus.RUNNING)
    RunEvent.objects.create(id=1_000, run=run, seq=2, type="run.started", data={})
    assert value(scrape(client), "oracle_runs_started_total") == 1

    # A transaction that took its id before 1,000 commits after that scrape.
    RunEvent.objects.create(id=999, run=run, seq=1, type="run.started", data={})
    clock.now += 61

    assert value(scrape(client), "oracle_runs_started_total") == 2
    clock.now += 61
    assert value(scrape(client), "oracle_runs_started_total") == 2


# --- who may read them ----------------------------------------------------------------


def test_staff_may_read_them(client: Client, staff: User) -> None:
    client.force_login(staff)

    assert client.get("/metrics").status_code == 200


def test_anyone_else_gets_a_404(client: Client, alice: User) -> None:
    assert client.get("/metrics").status_code == 404  # not a redirect to the login page

    client.force_login(alice)

    assert client.get("/metrics").status_code == 404


@override_settings(ORACLE_METRICS_TOKEN=TOKEN)
def test_the_metrics_token_opens_them_and_a_wrong_one_gets_a_404(client: Client, db: None) -> None:
    assert client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    for wrong in (f"Bearer {TOKEN}x", "Bearer ", f"Basic {TOKEN}", "Bearer oracle_abc"):
        assert client.get("/metrics", headers={"Authorization": wrong}).status_code == 404


def test_with_no_token_set_a_bearer_gets_a_404(client: Client, staff: User) -> None:
    client.force_login(staff)  # a staff session sending a token is judged by the token

    assert client.get("/metrics", headers={"Authorization": "Bearer "}).status_code == 404


# --- on the real stack: a worker's run, read by the web process ------------------------


def test_a_run_in_a_worker_shows_in_the_web_processes_metrics(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    code = (
        "from django.contrib.auth.models import User;"
        "User.objects.create_user('metrics-opal', password='correct horse battery', is_staff=True)"
    )
    assert processes.shell(code, env=stack.env).returncode == 0
    operator = httpx.Client(
        base_url=stack.url, cookies={"sessionid": log_in(stack, "metrics-opal")}
    )
    before = parse(operator.get("/metrics").text)
    fake_provider.set_script([{"text": ["Forty-two."]}])
    client = stack.client(stack.create_user("metrics-pete"))

    _, run_id = start_conversation(client, "The answer?")
    run = wait_until_finished(client, run_id)
    after = parse(operator.get("/metrics").text)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("oracle_runs_started_total") == 1
    assert grew("oracle_runs_finished_total", reason="completed") == 1
    assert grew("oracle_limit_events_total", event="run.finished", metric="", severity="",
                reason="completed") == 1  # fmt: skip
    assert grew("oracle_tokens_total") == run["tokens"] > 0
    assert grew("oracle_run_duration_seconds_count") == 1
    assert client.get("/metrics").status_code == 404  # pete's API token is no metrics token
