"""Runs that outlive a worker, pause at a limit, and continue: across real processes."""

from __future__ import annotations

from typing import Any

import httpx

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.e2e.test_websocket import log_in
from tests.stack import OracleStack


def messages_of(client: httpx.Client, conversation: str) -> list[dict[str, Any]]:
    return client.get(f"/api/conversations/{conversation}/").json()["messages"]


def tool_messages(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


def test_a_killed_worker_keeps_what_was_produced_and_the_run_resumes_by_itself(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script(
        [
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2*3"}}]},
            {"text": ["Half ", "way"], "hang": True},
            {"text": ["All ", "done."]},
        ]
    )
    client = stack.client(stack.create_user("kate"))
    conversation, run_id = start_conversation(client, "Work hard")
    processes.wait_for(
        lambda: "Half way" in "".join(m["content"] for m in messages_of(client, conversation)), 20
    )

    stack.kill_worker()
    run = processes.wait_for(  # a read shows the dead worker, and writes nothing
        lambda: (r := client.get(f"/api/runs/{run_id}/").json())["lost"] and r, 20
    )
    assert run["status"] == "running" and run["reason"] is None
    with httpx.Client(base_url=stack.url, cookies={"sessionid": log_in(stack, "kate")}) as page:
        shown = page.get(f"/c/{conversation}/").text
        assert "The worker running this answer has stopped responding." in shown
        assert client.get(f"/api/runs/{run_id}/").json()["status"] == "running"  # unwritten

        stack.start_worker()  # nobody presses anything: its sweeper marks the run, resumes it
        run = processes.wait_for(
            lambda: (r := client.get(f"/api/runs/{run_id}/").json())["reason"] == "completed" and r,
            30,
        )
        assert "stopped responding" not in page.get(f"/c/{conversation}/").text

    kept = messages_of(client, conversation)
    partial = next(m for m in kept if m["role"] == "assistant" and "Half way" in m["content"])
    assert partial["termination_reason"] == "interrupted"
    assert any("automatic retry 1 of 2" in m["content"] for m in kept if m["role"] == "system")
    assert run["lost"] is False
    assert run["tool_calls"] == 1  # the tool was not run again
    final = messages_of(client, conversation)
    assert [m for m in final if m["role"] == "assistant"][-1]["content"] == "All done."
    assert tool_messages(final) == ["6"]


def test_a_paused_run_continues_from_the_same_state(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    client = stack.client(stack.create_user("liam"))
    changed = client.patch("/api/settings/", json={"limit_action": "pause", "max_iterations": 2})
    assert changed.status_code == 200, changed.text
    fake_provider.set_script(
        [
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]},
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+2"}}]},
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "3+3"}}]},
            {"text": "Finished: 6."},
        ]
    )
    conversation, run_id = start_conversation(client, "Count up")
    paused = processes.wait_for(
        lambda: (r := client.get(f"/api/runs/{run_id}/").json())["status"] == "paused" and r, 20
    )
    assert paused["reason"] == "max_iterations"
    notice = [m for m in messages_of(client, conversation) if m["role"] == "system"][-1]
    assert "Paused" in notice["content"]
    requests_before = len(fake_provider.requests)

    assert client.post(f"/api/runs/{run_id}/continue/").status_code == 202
    run = wait_until_finished(client, run_id)

    assert run["reason"] == "completed"
    assert run["iterations"] == 4 and run["tool_calls"] == 3  # totals keep counting
    resumed_request = fake_provider.requests[requests_before]
    tool_results = [m["content"] for m in resumed_request["messages"] if m["role"] == "tool"]
    assert tool_results == ["2", "4"]  # the same state: nothing lost, no new user message
    users = [m for m in resumed_request["messages"] if m["role"] == "user"]
    assert [m["content"] for m in users] == ["Count up"]
    final = messages_of(client, conversation)
    assert [m for m in final if m["role"] == "assistant"][-1]["content"] == "Finished: 6."


def test_stopping_a_paused_run_ends_it_with_the_limits_reason(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    client = stack.client(stack.create_user("mona"))
    client.patch("/api/settings/", json={"limit_action": "pause", "max_iterations": 1})
    fake_provider.set_script(
        [{"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]}]
    )
    _, run_id = start_conversation(client, "Count")
    processes.wait_for(lambda: client.get(f"/api/runs/{run_id}/").json()["status"] == "paused", 20)

    assert client.post(f"/api/runs/{run_id}/cancel/").status_code == 202
    run = wait_until_finished(client, run_id)

    assert run["reason"] == "max_iterations"


def test_a_task_delivered_twice_runs_the_run_once(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([{"text": ["Once ", "only."], "chunk_delay": 0.3}])
    client = stack.client(stack.create_user("nora"))
    conversation, run_id = start_conversation(client, "Say it once")
    duplicate = (
        "from oracle.celery import app; "
        f"app.send_task('chat.execute_run', args=['{run_id}']); "
        f"app.send_task('chat.execute_run', args=['{run_id}'])"
    )

    sent = processes.shell(duplicate, env=stack.env)
    run = wait_until_finished(client, run_id)

    assert sent.returncode == 0, sent.stderr
    assert run["reason"] == "completed" and run["iterations"] == 1
    answers = [m["content"] for m in messages_of(client, conversation) if m["role"] == "assistant"]
    assert answers == ["Once only."]
    requests = [r for r in fake_provider.requests if r["messages"][-1]["content"] == "Say it once"]
    assert len(requests) == 1  # the model was asked once
