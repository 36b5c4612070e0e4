"""A change on the settings API applies to the next run, in the worker and in `ask --user`."""

from __future__ import annotations

import json

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.stack import OracleStack

LOOP_THEN_SUMMARY = [
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]},
    {"text": ["Summary: ", "1+1 is 2."]},
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+2"}}]},
]


def test_a_run_started_after_a_change_stops_at_the_new_iteration_limit(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    client = stack.client(stack.create_user("iris"))
    changed = client.patch("/api/settings/", json={"max_iterations": 2})
    assert changed.status_code == 200, changed.text
    fake_provider.set_script(LOOP_THEN_SUMMARY)

    _, run_id = start_conversation(client, "Keep calculating")
    run = wait_until_finished(client, run_id)

    assert run["reason"] == "max_iterations"
    assert run["iterations"] == 2
    # The wind-down call (the second) carried no tools: it is inside the limit.
    assert "tools" not in fake_provider.requests[-1]


def test_ask_with_user_uses_that_users_saved_settings(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    client = stack.client(stack.create_user("jack"))
    assert client.patch("/api/settings/", json={"max_iterations": 2}).status_code == 200
    fake_provider.set_script(LOOP_THEN_SUMMARY)

    result = processes.manage("ask", "--json", "--user", "jack", "Keep calculating",
                              env=stack.env, timeout=90)  # fmt: skip

    events = [json.loads(line) for line in result.stdout.splitlines()]
    finished = events[-1]
    assert finished["type"] == "run.finished"
    assert finished["reason"] == "max_iterations"
    assert finished["iterations"] == 2
