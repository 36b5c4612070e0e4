"""A call that acted never runs twice, across real processes: `manage.py serve` with our
testing MCP server, a step of two approved calls, the worker killed (SIGKILL) during the
second. The worker started again resumes the run by itself: the first call, which wrote
its line, is not made again; the second, cut mid-way and not safe to repeat, is told to
the model as cut; the run answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.run.tool_step import INTERRUPTED_CALL
from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import start_conversation
from tests.mcp.served import mcp_testing_server
from tests.served import ServedOracle

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, fake_provider: FakeServer
) -> Iterator[ServedOracle]:
    """`manage.py serve` with the testing MCP server, whose `append` asks first."""
    folder = tmp_path_factory.mktemp("call-once")
    config = folder / "mcp.json"
    servers = {"testing": mcp_testing_server(approve_tools=["append"])}
    config.write_text(json.dumps({"mcpServers": servers}))
    oracle = ServedOracle(
        folder,
        ORACLE_RUN_HEARTBEAT_TIMEOUT="3",
        ORACLE_AUTO_TITLES="false",  # the test counts the provider's calls
        ORACLE_MCP_SERVERS=str(config),
        **processes.model_env(fake_provider),
    ).start()
    try:
        yield oracle
    finally:
        oracle.stop()


def append(call_id: str, path: Path, line: str, seconds: float) -> dict[str, Any]:
    arguments = {"path": str(path), "line": line, "seconds": seconds}
    return {"id": call_id, "name": "testing__append", "arguments": arguments}


def steps(client: httpx.Client, conversation: str) -> dict[str, dict[str, Any]]:
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    return {m["metadata"]["id"]: m for m in messages if m["role"] == "tool"}


def test_a_worker_killed_during_the_second_approved_call_never_makes_the_first_again(
    served: ServedOracle, fake_provider: FakeServer, tmp_path: Path
) -> None:
    marker, second = tmp_path / "marker.txt", tmp_path / "second.txt"
    client = served.client(served.create_user("quinn"))
    processes.wait_for(
        lambda: client.get("/healthz").json().get("mcp_servers", {}).get("testing") == "ready",
        60,
    )
    calls = [append("call_write", marker, "one", 0), append("call_slow", second, "two", 60)]
    fake_provider.set_script([{"tool_calls": calls}, {"text": ["One ", "line ", "written."]}])
    earlier = len(fake_provider.requests)
    conversation, run_id = start_conversation(client, "Write one line, then the slow one")
    waiting = processes.wait_for(
        lambda: (run := client.get(f"/api/runs/{run_id}/").json())["pending_approval"] and run,
        30,
    )
    assert [call["id"] for call in waiting["pending_approval"]] == ["call_write", "call_slow"]
    assert client.post(f"/api/runs/{run_id}/approve/", json={}).status_code == 202
    processes.wait_for(
        lambda: (
            (shown := steps(client, conversation))
            and shown["call_write"]["metadata"]["status"] == "done"
            and shown["call_slow"]["metadata"]["status"] == "running"
        ),
        30,
    )
    assert marker.read_text() == "one\n"
    worker = served.child("worker")

    served.kill(worker)  # during the second call

    run = processes.wait_for(
        lambda: (r := client.get(f"/api/runs/{run_id}/").json())["reason"] == "completed" and r,
        90,
    )  # resumed by itself, on the worker started again
    assert served.child("worker") != worker
    assert marker.read_text() == "one\n"  # one line: the first call was not made again
    assert not second.exists() or second.read_text() == "two\n"  # never run a second time
    shown = steps(client, conversation)
    assert (shown["call_write"]["content"], shown["call_write"]["metadata"]["ok"]) == (
        "added one", True,
    )  # fmt: skip
    assert (shown["call_slow"]["content"], shown["call_slow"]["metadata"]["ok"]) == (
        INTERRUPTED_CALL, False,
    )  # fmt: skip
    asked = [r["messages"] for r in fake_provider.requests[earlier:]]
    assert len(asked) == 2  # the step was not asked for again
    told = {m["tool_call_id"]: m["content"] for m in asked[1] if m["role"] == "tool"}
    assert told == {"call_write": "added one", "call_slow": INTERRUPTED_CALL}
    assert run["tool_calls"] == 2 and run["pending_approval"] == []
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    answers = [m["content"] for m in messages if m["role"] == "assistant"]
    assert answers[-1] == "One line written."
