"""A change on the settings API applies to the next run, in the worker and in `ask --user`:
its limits, and the user's custom instructions in what the model is sent."""

from __future__ import annotations

import json
from typing import Any

from agents.loop import SYSTEM_PROMPT
from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.stack import OracleStack

INSTRUCTIONS = "Answer in French.\nAddress me as Doctor."
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


def requests_asking(provider: FakeServer, question: str) -> list[list[dict[str, Any]]]:
    """The messages of every model call that answered `question` (not the titling)."""
    asked = [request["messages"] for request in provider.requests]
    return [m for m in asked if m[0]["content"].startswith(SYSTEM_PROMPT) and question in str(m)]


def test_a_users_custom_instructions_reach_the_model_in_their_runs_and_no_one_elses(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    ines = stack.client(stack.create_user("ines"))
    otto = stack.client(stack.create_user("otto"))
    saved = ines.patch("/api/settings/", json={"custom_instructions": INSTRUCTIONS})
    assert saved.status_code == 200, saved.text
    fake_provider.set_script([{"text": ["Bonjour."]}], repeat_last=True)

    _, theirs = start_conversation(ines, "Say hello, Ines asks")
    _, others = start_conversation(otto, "Say hello, Otto asks")
    assert wait_until_finished(ines, theirs)["reason"] == "completed"
    assert wait_until_finished(otto, others)["reason"] == "completed"

    (asked,) = requests_asking(fake_provider, "Ines asks")
    system = asked[0]["content"]
    assert f"<custom_instructions>\n{INSTRUCTIONS}\n</custom_instructions>" in system
    assert system.index(SYSTEM_PROMPT) < system.index(INSTRUCTIONS)
    (other,) = requests_asking(fake_provider, "Otto asks")
    assert other[0]["content"] == SYSTEM_PROMPT


def test_ask_with_user_sends_that_users_custom_instructions(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    client = stack.client(stack.create_user("ivo"))
    assert client.patch("/api/settings/", json={"custom_instructions": INSTRUCTIONS}).is_success
    fake_provider.set_script([{"text": ["Bonjour."]}])

    result = processes.manage("ask", "--json", "--user", "ivo", "Say hello, Ivo asks",
                              env=stack.env, timeout=90)  # fmt: skip

    finished = json.loads(result.stdout.splitlines()[-1])
    assert finished["instructions"] == INSTRUCTIONS
    (asked,) = requests_asking(fake_provider, "Ivo asks")
    assert INSTRUCTIONS in asked[0]["content"]
