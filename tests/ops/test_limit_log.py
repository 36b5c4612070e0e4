"""Every limit event of a run is one JSON line of the limit log, with who, where and how
much: its user, conversation, agent type, skill and counters."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx
import pytest
from concurrent_log_handler import ConcurrentRotatingFileHandler
from django.conf import settings
from django.contrib.auth.models import User

from agents.state import AgentState
from agents.testing.fake_server import FakeServer
from chat.models import Conversation, Run, RunStatus
from ops import limit_log
from runs.recorder import RunRecorder
from tests import processes
from tests.e2e.test_runs_api import sse_events, start_conversation, wait_until_finished
from tests.stack import OracleStack

Lines = Callable[[], list[dict[str, Any]]]
Event = dict[str, Any]


class Idle:
    """A journal that never writes: the recorder keeps everything in memory."""

    def wake(self, *, now: bool = False) -> None:
        pass


@pytest.fixture
def lines(monkeypatch: pytest.MonkeyPatch) -> Lines:
    """What the limit log writes, parsed, through the formatter settings configure (the
    real file and stdout are left alone)."""
    logger = logging.getLogger("oracle.limits")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.handlers[0].formatter)
    monkeypatch.setattr(logger, "handlers", [handler])
    return lambda: [json.loads(line) for line in stream.getvalue().splitlines()]


def alices_run(**counters: Any) -> Run:
    """A run of alice's deep-research conversation, loaded as a worker claims it."""
    alice = User(pk=7, username="alice")
    conversation = Conversation(owner=alice, skill="deep_research")
    return Run(conversation=conversation, status=RunStatus.RUNNING, **counters)


def recorder_of(run: Run) -> RunRecorder:
    return RunRecorder(run, Idle())  # type: ignore[arg-type]


WARNING = {
    "type": "system.notice",
    "severity": "warning",
    "metric": "iterations",
    "value": 1,
    "limit": 3,
    "text": "Approaching the iteration limit (1 of 3).",
}
FINISHED = {
    "type": "run.finished",
    "reason": "max_iterations",
    "failure_class": "deterministic",
    "iterations": 3,
    "tool_calls": 2,
    "tokens": 1234,
    "cost_usd": 0.0125,
    "elapsed_ms": 4567,
    "final_text": "Stopped: …",
}


async def test_it_writes_one_line_per_limit_event_and_none_for_the_rest(lines: Lines) -> None:
    run = alices_run()
    recorder = recorder_of(run)
    stream = [
        {"type": "run.started", "run_id": str(run.pk), "model": "m", "config": {}},
        {"type": "assistant.delta", "text": "Let me "},
        {"type": "assistant.delta", "text": "check."},
        {"type": "tool.call", "id": "c1", "name": "calculator", "arguments": {}},
        {"type": "tool.result", "id": "c1", "name": "calculator", "ok": True, "content": "2"},
        WARNING,
        {"type": "budget.extended", "from": 3, "to": 6},
        {"type": "run.paused", "reason": "max_iterations"},
        {"type": "run.resumed", "run_id": str(run.pk), "round": 2, "config": {}},
        {"type": "subagent.finished", "call_id": "c2", "agent_type": "researcher",
         "reason": "completed", "counters": {}},
        {"type": "subagent.finished", "call_id": "c3", "agent_type": "summarizer",
         "reason": "token_budget", "counters": {"tokens": 900}},
        {"type": "assistant.message", "text": "Stopped: …", "final": True, "tool_calls": []},
        FINISHED,
    ]  # fmt: skip

    for event in stream:
        await recorder(dict(event))

    logged = lines()
    assert [(line["event"], line["seq"]) for line in logged] == [
        ("system.notice", 5),  # numbered as stored: the deltas are one event
        ("budget.extended", 6),
        ("run.paused", 7),
        ("run.resumed", 8),
        ("subagent.finished", 10),  # the helper that completed is no limit event
        ("run.finished", 12),
    ]
    for line in logged:
        assert line["run_id"] == str(run.pk)
        assert line["user"] == {"id": 7, "username": "alice"}
        assert line["conversation_id"] == str(run.conversation_id)
        assert line["skill"] == "deep_research"
        datetime.fromisoformat(line["timestamp"])


async def test_a_wait_for_the_users_approval_is_no_limit_event(lines: Lines) -> None:
    run = alices_run()
    recorder = recorder_of(run)
    call = {"id": "c1", "name": "ops__deploy", "server": "ops", "arguments": {}}
    stream = [
        {"type": "run.started", "run_id": str(run.pk), "model": "m", "config": {}},
        {"type": "tool.call", **{k: v for k, v in call.items() if k != "server"}},
        {"type": "tool.approval_requested", **call},
        {"type": "system.notice", "severity": "warning", "metric": None, "value": None,
         "limit": None, "text": "The Oracle wants to make this tool call…",
         "reason": "approval"},
        {"type": "run.paused", "reason": "approval"},
        {"type": "tool.approval_given", "id": "c1", "name": "ops__deploy", "approved": True},
        {"type": "run.resumed", "run_id": str(run.pk), "round": 1, "config": {},
         "reason": "approval"},
        {"type": "tool.result", "id": "c1", "name": "ops__deploy", "ok": True, "content": "ok"},
        {**FINISHED, "reason": "completed", "failure_class": None},
    ]  # fmt: skip

    for event in stream:
        await recorder(dict(event))

    assert [line["event"] for line in lines()] == ["run.finished"]


def test_a_warning_carries_its_metric_figures_and_the_live_counters() -> None:
    run = alices_run()
    live = {"iterations": 1, "tool_calls": 1, "tokens": 300, "cost_usd": 0.002, "elapsed_ms": 1500}

    line = limit_log.build_line(run, {**WARNING, "seq": 6}, live)

    assert line is not None
    assert line["agent_type"] == "oracle"
    assert (line["metric"], line["value"], line["limit"], line["severity"]) == (
        "iterations", 1, 3, "warning",
    )  # fmt: skip
    assert line["counters"] == {
        "iterations": 1, "tool_calls": 1, "tokens": 300, "cost_usd": 0.002, "elapsed_s": 1.5,
    }  # fmt: skip
    assert (line["elapsed_s"], line["cost_usd"], line["reason"]) == (1.5, 0.002, None)


def test_an_ending_carries_its_reason_and_its_own_counters() -> None:
    line = limit_log.build_line(alices_run(), {**FINISHED, "seq": 20}, {"iterations": 2})

    assert line is not None
    assert (line["reason"], line["failure_class"]) == ("max_iterations", "deterministic")
    assert line["counters"] == {
        "iterations": 3, "tool_calls": 2, "tokens": 1234, "cost_usd": 0.0125, "elapsed_s": 4.567,
    }  # fmt: skip
    assert (line["elapsed_s"], line["cost_usd"]) == (4.567, 0.0125)
    assert "metric" not in line and "final_text" not in line


def test_a_completed_run_is_logged_too() -> None:
    line = limit_log.build_line(alices_run(), {**FINISHED, "reason": "completed"}, {})

    assert line is not None and line["reason"] == "completed"


def test_an_extension_carries_the_old_and_new_ceiling() -> None:
    line = limit_log.build_line(alices_run(), {"type": "budget.extended", "from": 3, "to": 12}, {})

    assert line is not None
    assert (line["from"], line["to"]) == (3, 12)


def test_a_round_resumed_before_any_checkpoint_shows_the_runs_saved_totals() -> None:
    run = alices_run(iterations=4, tool_calls=3, tokens=800, cost_usd=0.01, elapsed_ms=2000)

    line = limit_log.build_line(run, {"type": "run.resumed", "round": 2}, {})

    assert line is not None
    assert line["counters"] == {
        "iterations": 4, "tool_calls": 3, "tokens": 800, "cost_usd": 0.01, "elapsed_s": 2.0,
    }  # fmt: skip


def test_a_subagent_at_its_limit_is_logged_with_its_type_and_its_own_counters() -> None:
    helper = {"iterations": 2, "tool_calls": 0, "tokens": 1600, "cost_usd": 0.0, "elapsed_ms": 300}
    event = {
        "type": "subagent.finished", "call_id": "c1", "agent_type": "researcher",
        "reason": "token_budget", "counters": helper,
    }  # fmt: skip

    line = limit_log.build_line(alices_run(), event, {"iterations": 9, "tokens": 99_999})

    assert line is not None
    assert (line["agent_type"], line["reason"], line["call_id"]) == (
        "researcher", "token_budget", "c1",
    )  # fmt: skip
    assert line["counters"]["tokens"] == 1600
    assert line["skill"] == "deep_research"


async def test_the_live_counters_come_from_the_last_checkpoint(lines: Lines) -> None:
    recorder = recorder_of(alices_run())
    state = AgentState(run_id="r")
    state.total.iterations, state.total.tool_calls = 2, 1
    await recorder.checkpoint(state)

    await recorder(dict(WARNING))

    (line,) = lines()
    assert line["counters"]["iterations"] == 2
    assert line["counters"]["tool_calls"] == 1


async def test_a_tokens_delta_never_reaches_the_limit_log(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any) -> None:
        raise AssertionError("the limit log was asked about a delta")

    monkeypatch.setattr(limit_log, "record", refuse)
    recorder = recorder_of(alices_run())

    for text in ("a", "b", "c"):
        await recorder({"type": "assistant.delta", "text": text})

    assert recorder.pending[-1]["text"] == "abc"


async def test_a_run_loaded_without_its_conversation_is_logged_without_querying(
    lines: Lines,
) -> None:
    run = Run(pk=uuid.uuid4(), conversation_id=uuid.uuid4(), status=RunStatus.RUNNING)

    await recorder_of(run)(dict(FINISHED))  # on an event loop a query would raise

    (line,) = lines()
    assert line["conversation_id"] == str(run.conversation_id)
    assert (line["user"], line["skill"]) == (None, None)


def test_the_log_file_is_under_the_var_folder_and_rotates_at_10_mb_keeping_five() -> None:
    handlers = logging.getLogger("oracle.limits").handlers

    (file,) = [h for h in handlers if isinstance(h, ConcurrentRotatingFileHandler)]
    assert file.baseFilename == str(settings.VAR_DIR / "log" / "limits.jsonl")
    assert (file.maxBytes, file.backupCount) == (10 * 1024 * 1024, 5)


# --- on the real stack: the worker writes the file ------------------------------------


def calculation(expression: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "calculator", "arguments": {"expression": expression}}]}


SUMMARY = {"text": ["Done: ", "the sums are 2, 4 and so on."]}
DELEGATE = {
    "tool_calls": [{"name": "delegate",
                    "arguments": {"agent_type": "researcher", "task": "Add things up."}}],
    "usage": {"prompt_tokens": 100, "completion_tokens": 20},
}  # fmt: skip


def logged_lines(run_id: str) -> list[dict[str, Any]]:
    """The limit log's lines about `run_id`, rotated files included (other runs of the
    suite write to the same file)."""
    log = settings.LIMIT_LOG_FILE
    files = sorted(log.parent.glob(log.name + "*"), reverse=True)  # the oldest first
    lines = [json.loads(line) for file in files for line in file.read_text().splitlines()]
    return [line for line in lines if line["run_id"] == run_id]


def limit_events(client: httpx.Client, run_id: str, after: int | None = None) -> list[Event]:
    """The run's limit events as its event stream (from the database) sends them."""
    events = sse_events(client, run_id, last_event_id=after)
    return [e for e in events if limit_log.is_limit_event(e["type"], e.get("reason"))]


def assert_logged_once_each(run_id: str, events: list[Event], username: str) -> list[Event]:
    """Each event is one line of the log, in order, with the event's own fields."""
    lines = logged_lines(run_id)
    assert [(line["event"], line["seq"]) for line in lines] == [
        (event["type"], event["seq"]) for event in events
    ]
    for line, event in zip(lines, events, strict=True):
        assert line["user"]["username"] == username
        assert (line["agent_type"], line["skill"]) == (
            event.get("agent_type", "oracle"), "default",
        )  # fmt: skip
        assert line["conversation_id"]
        for key in ("reason", "metric", "value", "limit", "severity", "from", "to"):
            assert line.get(key) == event.get(key), key
        assert set(line["counters"]) == {"iterations", "tool_calls", "tokens", "cost_usd",
                                         "elapsed_s"}  # fmt: skip
    return lines


def test_a_run_that_warns_extends_and_stops_logs_each_limit_event_once(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    client = stack.client(stack.create_user("log-lena"))
    changed = client.patch("/api/settings/", json={
        "max_iterations": 3, "limit_action": "extend", "extend_multiplier": 2, "max_extensions": 1,
    })  # fmt: skip
    assert changed.status_code == 200, changed.text
    fake_provider.set_script([calculation(f"{n}+{n}") for n in range(1, 6)] + [SUMMARY])

    _, run_id = start_conversation(client, "Keep adding")
    run = wait_until_finished(client, run_id)

    events = limit_events(client, run_id)
    lines = assert_logged_once_each(run_id, events, "log-lena")
    kinds = [(line["event"], line.get("severity"), line["reason"]) for line in lines]
    assert kinds == [
        ("system.notice", "warning", None),  # two before the limit of 3
        ("budget.extended", None, None),
        ("system.notice", "info", None),  # "raised to 6"
        ("system.notice", "warning", None),  # two before the new limit
        ("system.notice", "warning", "turn_budget_exhausted"),
        ("run.finished", None, "turn_budget_exhausted"),
    ]
    assert (lines[1]["from"], lines[1]["to"]) == (3, 6)
    assert lines[0]["counters"]["iterations"] == 1
    finished = lines[-1]
    assert finished["counters"] == {
        "iterations": run["iterations"], "tool_calls": run["tool_calls"],
        "tokens": run["tokens"], "cost_usd": run["cost_usd"],
        "elapsed_s": run["elapsed_ms"] / 1000,
    }  # fmt: skip
    # The same lines go to the worker's stdout.
    printed = "".join(log.read_text() for log in stack.folder.glob("worker-*.log"))
    assert json.dumps(finished["run_id"]) in printed
    assert f'"seq": {finished["seq"]}, "user": {{"id": {finished["user"]["id"]}' in printed


def test_a_paused_then_continued_run_logs_the_pause_the_resumption_and_the_completion(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    client = stack.client(stack.create_user("log-milo"))
    changed = client.patch("/api/settings/", json={"max_iterations": 2, "limit_action": "pause"})
    assert changed.status_code == 200, changed.text
    fake_provider.set_script([calculation("1+1"), calculation("2+2"), SUMMARY])

    _, run_id = start_conversation(client, "Add, then wait")
    processes.wait_for(lambda: client.get(f"/api/runs/{run_id}/").json()["status"] == "paused", 30)
    before = limit_events(client, run_id)
    assert client.post(f"/api/runs/{run_id}/continue/").status_code == 202
    run = wait_until_finished(client, run_id)

    events = before + limit_events(client, run_id, after=before[-1]["seq"])
    lines = assert_logged_once_each(run_id, events, "log-milo")
    assert [line["event"] for line in lines][-4:] == [
        "system.notice", "run.paused", "run.resumed", "run.finished",
    ]  # fmt: skip
    paused, resumed, finished = lines[-3:]
    assert paused["reason"] == "max_iterations"
    assert resumed["counters"]["iterations"] == 2  # where the first round left off
    assert (finished["reason"], run["reason"]) == ("completed", "completed")
    assert finished["counters"]["iterations"] == run["iterations"] == 3


def test_a_helper_stopped_at_its_token_limit_is_logged_with_its_type(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    client = stack.client(stack.create_user("log-nora"))
    assert client.patch("/api/settings/", json={"token_budget": 2000}).status_code == 200
    # The helper may spend 80% of the 1,880 tokens left after the first call: 1,504.
    helper_overspends = {**calculation("1+1"),
                         "usage": {"prompt_tokens": 1500, "completion_tokens": 100}}  # fmt: skip
    fake_provider.set_script([DELEGATE, helper_overspends, SUMMARY])

    _, run_id = start_conversation(client, "Ask a helper")
    run = wait_until_finished(client, run_id)

    lines = assert_logged_once_each(run_id, limit_events(client, run_id), "log-nora")
    (helper,) = [line for line in lines if line["event"] == "subagent.finished"]
    assert (helper["agent_type"], helper["reason"]) == ("researcher", "token_budget")
    assert helper["counters"]["tokens"] == 1600  # its own, not the run's
    assert lines[-1]["event"] == "run.finished"
    assert lines[-1]["counters"]["tokens"] == run["tokens"] > 1600


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_worker_was_lost_logs_its_interrupted_ending_once(lines: Lines) -> None:
    from chat.services import conversation_create
    from runs.interruptions import run_interrupt

    alice = User.objects.create_user("alice-lost")
    conversation = conversation_create(owner=alice)
    run = Run.objects.create(conversation=conversation, status=RunStatus.RUNNING, iterations=2)

    run_interrupt(run_id=run.pk, notice="The worker running this stopped answering.")

    (line,) = [line for line in lines() if line["event"] == "run.finished"]
    assert (line["run_id"], line["reason"]) == (str(run.pk), "interrupted")
    assert line["user"] == {"id": alice.pk, "username": "alice-lost"}
    assert line["counters"]["iterations"] == 2
