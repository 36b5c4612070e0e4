"""Delegation on the real stack: a worker runs the subagent inside its parent's run, the
chat keeps the subagent's answer and never its unfinished work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_faults import completed, serving
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.stack import OracleStack

DELEGATE = {
    "tool_calls": [
        {
            "id": "call_delegate",
            "name": "delegate",
            "arguments": {"agent_type": "researcher", "task": "Find out how owls hunt."},
        }
    ],
    "usage": {"prompt_tokens": 100, "completion_tokens": 20},
}
CHILD_ANSWER = {
    "text": ["Owls hunt ", "by sound."],
    "usage": {"prompt_tokens": 300, "completion_tokens": 40},
}
PARENT_ANSWER = {
    "text": ["They hunt by sound."],
    "usage": {"prompt_tokens": 500, "completion_tokens": 10},
}
UNFINISHED = {"text": ["Unfinished ", "draft "], "chunk_delay": 0.2, "hang": True}


def messages_of(client: httpx.Client, conversation: str) -> list[dict[str, Any]]:
    return client.get(f"/api/conversations/{conversation}/").json()["messages"]


def wait_for_a_working_subagent(client: httpx.Client, conversation: str) -> None:
    processes.wait_for(
        lambda: any(
            (m["metadata"].get("subagent") or {}).get("status") == "running"
            for m in messages_of(client, conversation)
        ),
        30,
    )


def delegate_step(messages: list[dict[str, Any]]) -> dict[str, Any]:
    (step,) = [m for m in messages if m["role"] == "tool" and m["metadata"]["name"] == "delegate"]
    return step


def test_a_subagent_answers_inside_the_run_and_its_usage_rolls_up(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([DELEGATE, CHILD_ANSWER, PARENT_ANSWER])
    earlier = len(fake_provider.requests)
    client = stack.client(stack.create_user("della"))

    conversation, run_id = start_conversation(client, "How do owls hunt?")
    run = wait_until_finished(client, run_id)

    assert run["reason"] == "completed"
    assert run["tokens"] == 120 + 340 + 510  # the parent's two calls and the subagent's
    messages = messages_of(client, conversation)
    step = delegate_step(messages)
    assert step["content"] == "Owls hunt by sound."  # its answer joins the main chain
    sub = step["metadata"]["subagent"]
    assert (sub["agent_type"], sub["status"]) == ("researcher", "finished")
    assert sub["reason"] == "completed"
    assert sub["counters"]["tokens"] == 340
    assert [m["content"] for m in messages if m["role"] == "assistant"][-1] == "They hunt by sound."
    # The subagent was asked as a researcher, with the task alone.
    child = fake_provider.requests[earlier + 1]["messages"]
    assert child[0]["content"].startswith("You are a researcher")
    assert child[1] == {"role": "user", "content": "Find out how owls hunt."}
    assert "delegate" not in json.dumps(fake_provider.requests[earlier + 1].get("tools", []))


def test_stop_mid_delegation_keeps_the_main_chain_and_nothing_of_the_subagent(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([{**DELEGATE, "text": ["Asking a researcher."]}, UNFINISHED])
    client = stack.client(stack.create_user("delph"))
    conversation, run_id = start_conversation(client, "How do owls hunt?")
    wait_for_a_working_subagent(client, conversation)

    assert client.post(f"/api/runs/{run_id}/cancel/").status_code == 202
    run = wait_until_finished(client, run_id)

    assert run["reason"] == "cancelled"
    messages = messages_of(client, conversation)
    assert "Unfinished" not in json.dumps(messages)
    assert messages[1]["content"] == "Asking a researcher."  # the main chain is kept
    step = delegate_step(messages)
    assert step["metadata"]["subagent"]["status"] == "discarded"
    assert step["metadata"]["subagent"]["steps"] == []


def test_a_worker_killed_mid_delegation_resumes_with_a_fresh_subagent_and_no_trace_of_the_first(
    tmp_path: Path, fake_provider: FakeServer
) -> None:
    with serving(tmp_path, fake_provider) as served:
        client = served.client(served.create_user("kira"))
        fake_provider.set_script([DELEGATE, UNFINISHED, CHILD_ANSWER, PARENT_ANSWER])
        conversation, run_id = start_conversation(client, "How do owls hunt?")
        wait_for_a_working_subagent(client, conversation)
        served.kill(served.child("worker"))  # the subagent is streaming

        completed(client, run_id)  # resumed by itself: the delegation runs again

        messages = messages_of(client, conversation)
        assert "Unfinished" not in json.dumps(messages)
        step = delegate_step(messages)  # the same step, now with the second subagent's answer
        assert step["content"] == "Owls hunt by sound."
        assert step["metadata"]["subagent"]["status"] == "finished"
        assert [m["content"] for m in messages if m["role"] == "assistant"][-1] == (
            "They hunt by sound."
        )
