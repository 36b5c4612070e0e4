"""A message becomes a run in a real worker; its events stream over SSE; it is saved."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.stack import OracleStack


def start_conversation(client: httpx.Client, content: str) -> tuple[str, str]:
    conversation = client.post("/api/conversations/", json={}).json()["id"]
    posted = client.post(f"/api/conversations/{conversation}/messages/", json={"content": content})
    assert posted.status_code == 202, posted.text
    return conversation, posted.json()["run_id"]


def wait_until_finished(client: httpx.Client, run_id: str, timeout: float = 30) -> dict[str, Any]:
    return processes.wait_for(
        lambda: (run := client.get(f"/api/runs/{run_id}/").json())["status"] == "finished" and run,
        timeout,
    )


def sse_events(
    client: httpx.Client, run_id: str, last_event_id: int | None = None
) -> list[dict[str, Any]]:
    headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
    events = []
    with client.stream("GET", f"/api/runs/{run_id}/events/", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        block: dict[str, str] = {}
        for line in response.iter_lines():
            if line.startswith(("id: ", "event: ", "data: ")):
                key, _, value = line.partition(": ")
                block[key] = value
            elif not line and block:
                data = json.loads(block["data"])
                assert int(block["id"]) == data["seq"]
                assert block["event"] == data["type"]
                events.append(data)
                block = {}
    return events


def test_a_message_is_answered_by_a_worker_and_saved(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([{"text": ["The answer ", "is ", "42."]}])
    client = stack.client(stack.create_user("erin"))

    conversation, run_id = start_conversation(client, "What is the answer?")
    run = wait_until_finished(client, run_id)

    assert run["reason"] == "completed"
    assert run["iterations"] == 1
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "What is the answer?"),
        ("assistant", "The answer is 42."),
    ]
    assert messages[1]["termination_reason"] == "completed"
    assert [m["seq"] for m in messages] == [1, 2]


def test_sse_streams_every_event_in_order_and_resumes_after_last_event_id(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script(
        [
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]},
            {"text": ["It ", "is ", "42", "."], "chunk_delay": 0.05},
        ]
    )
    client = stack.client(stack.create_user("frank"))

    _, run_id = start_conversation(client, "What is 6*7?")
    live = sse_events(client, run_id)

    seqs = [event["seq"] for event in live]
    assert seqs == list(range(1, len(live) + 1))  # no gap, no duplicate
    types = [event["type"] for event in live]
    assert types[0] == "run.started"
    assert types[-1] == "run.finished"
    assert "tool.call" in types and "tool.result" in types
    result = next(e for e in live if e["type"] == "tool.result")
    assert result["ok"] and result["content"] == "42"
    streamed = "".join(e["text"] for e in live if e["type"] == "assistant.delta")
    assert streamed == "It is 42."
    assert live[-1]["final_text"] == "It is 42."

    replay = sse_events(client, run_id, last_event_id=3)
    assert replay == live[3:]


def test_a_second_message_while_a_run_is_active_is_409(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([{"text": ["slow"], "delay": 2}])
    client = stack.client(stack.create_user("gina"))
    conversation, run_id = start_conversation(client, "Take your time")

    second = client.post(f"/api/conversations/{conversation}/messages/", json={"content": "And?"})

    assert second.status_code == 409
    assert "still working" in second.json()["error"]
    wait_until_finished(client, run_id)
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["Take your time"]


def test_cancel_during_a_slow_stream_ends_within_a_second_keeping_the_text(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([{"text": ["Thinking ", "about ", "it"], "hang": True}])
    client = stack.client(stack.create_user("hank"))
    conversation, run_id = start_conversation(client, "Think forever")
    processes.wait_for(
        lambda: (
            "Thinking"
            in "".join(
                m["content"]
                for m in client.get(f"/api/conversations/{conversation}/").json()["messages"]
            )
        ),
        15,
    )

    started = time.monotonic()
    assert client.post(f"/api/runs/{run_id}/cancel/").status_code == 202
    run = wait_until_finished(client, run_id, timeout=5)
    took = time.monotonic() - started

    assert run["reason"] == "cancelled"
    assert took < 1.0, f"the run took {took:.2f} s to stop"
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    final = [m for m in messages if m["role"] == "assistant"][-1]
    assert "Thinking about it" in final["content"]
    assert final["termination_reason"] == "cancelled"
    assert any(m["role"] == "system" for m in messages)
    assert fake_provider.wait_for_disconnect(timeout=2)


def test_api_requests_reuse_the_web_processs_redis_connections(stack: OracleStack) -> None:
    """Each API request looks up its address's count of bad tokens in Redis. daphne
    answers each request in a context of its own, and Django keeps a cache object per
    context: the lookups must still share the process's connections to Redis, not open
    one for every request (an operator sees that as connection churn and CPU)."""
    import redis

    client = stack.client(stack.create_user("redis-connections"))
    server = redis.Redis.from_url(stack.env["REDIS_URL"])

    def opened() -> int:
        return int(server.info("stats")["total_connections_received"])

    assert client.get("/api/conversations/").status_code == 200  # pools warm
    before = opened()
    answers = [client.get("/api/conversations/").status_code for _ in range(30)]
    after = opened()
    server.close()

    assert answers == [200] * 30
    # The worker polls Redis meanwhile too (about one connection a second at most).
    assert after - before <= 5, f"{after - before} new Redis connections for 30 requests"
