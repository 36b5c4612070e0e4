"""MCP servers through the whole product: a real worker hosts them, runs call their tools
under the limits, a person approves or denies over the API, and SSE carries it all.

The servers: `mcp-server-time` from PyPI (written by others) and our testing server,
both over stdio, and one whose command does not exist.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import sse_events, start_conversation, wait_until_finished
from tests.mcp.served import mcp_testing_server
from tests.stack import OracleStack

ROOT = Path(settings.BASE_DIR)


@pytest.fixture(scope="module")
def client(mcp_stack: OracleStack) -> Iterator[httpx.Client]:
    with mcp_stack.client(mcp_stack.create_user("mona")) as client:
        processes.wait_for(
            lambda: client.get("/healthz").json().get("mcp_servers", {}).get("time") == "ready",
            30,
        )
        yield client


def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def tool_messages(client: httpx.Client, conversation: str) -> list[dict[str, object]]:
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    return [m for m in messages if m["role"] == "tool"]


def test_health_and_the_tool_list_show_each_server(client: httpx.Client) -> None:
    health = client.get("/healthz").json()
    tools = {tool["name"]: tool for tool in client.get("/api/tools/").json()["tools"]}

    assert health["status"] == "ok"
    assert health["mcp_servers"] == {
        "time": "ready",
        "testing": "ready",
        "testing_": "ready",
        "everything": "ready",
        "broken": "failed",
    }
    assert tools["calculator"]["server"] == ""
    assert tools["time__get_current_time"]["server"] == "time"
    assert (
        "timezone" in tools["time__get_current_time"]["description"].lower()
        or tools["time__get_current_time"]["description"]
    )
    assert tools["testing__echo"]["approval"] is True
    assert tools["testing__pid"]["approval"] is False
    assert not any(tool["server"] == "broken" for tool in tools.values())


def test_a_run_calls_a_real_servers_tool_as_one_tool_call(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    fake_provider.set_script(
        [call("time__get_current_time", {"timezone": "Asia/Tokyo"}), {"text": ["It is late."]}]
    )
    conversation, run_id = start_conversation(client, "What time is it in Tokyo?")
    run = wait_until_finished(client, run_id)

    assert run["reason"] == "completed"
    assert run["tool_calls"] == 1
    events = sse_events(client, run_id)
    (result,) = [e for e in events if e["type"] == "tool.result"]
    assert result["ok"] is True
    assert "Asia/Tokyo" in result["content"]
    (step,) = tool_messages(client, conversation)
    assert "Asia/Tokyo" in str(step["content"])


def test_a_run_calls_server_everything_over_streamable_http(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    fake_provider.set_script(
        [call("everything__echo", {"message": "over http"}), {"text": ["It echoed."]}]
    )
    _, run_id = start_conversation(client, "Echo over HTTP")
    run = wait_until_finished(client, run_id)

    assert (run["reason"], run["tool_calls"]) == ("completed", 1)
    (result,) = [e for e in sse_events(client, run_id) if e["type"] == "tool.result"]
    assert (result["ok"], result["content"]) == (True, "Echo: over http")


def test_a_hostile_servers_tools_are_listed_safely_and_runs_using_them_end(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    names = [tool["name"] for tool in client.get("/api/tools/").json()["tools"]]
    (long_name,) = [name for name in names if name.startswith("testing__aaaa")]
    assert len(long_name) <= 64 and "testing__we_ird_" in names
    assert not any("bad_schema" in name for name in names)

    fake_provider.set_script(
        [
            call(long_name, {}),
            call("testing__huge", {"chars": 300_000}),
            {"text": ["Survived."]},
        ]
    )
    _, run_id = start_conversation(client, "Use the strange tools")
    run = wait_until_finished(client, run_id)

    assert (run["reason"], run["tool_calls"]) == ("completed", 2)
    unknown, huge = [e for e in sse_events(client, run_id) if e["type"] == "tool.result"]
    assert unknown["ok"] is False and "Unknown tool" in unknown["content"]
    assert huge["ok"] is True and len(huge["content"]) < 101_000
    assert "[Cut by Oracle: the result had 300,000 characters" in huge["content"]


def test_approve_runs_the_call_and_the_run_goes_on(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([call("testing__echo", {"text": "ship it"}), {"text": ["Shipped."]}])
    conversation, run_id = start_conversation(client, "Ship it")
    waiting = processes.wait_for(
        lambda: (run := client.get(f"/api/runs/{run_id}/").json())["status"] == "paused" and run,
        30,
    )
    (pending,) = waiting["pending_approval"]
    assert pending["name"] == "testing__echo"
    assert pending["server"] == "testing"
    assert pending["arguments"] == {"text": "ship it"}
    until_paused = sse_events(client, run_id)  # the stream ends at the pause
    assert [e["type"] for e in until_paused][-3:] == [
        "tool.approval_requested",
        "system.notice",
        "run.paused",
    ]
    assert client.post(f"/api/runs/{run_id}/continue/").status_code == 409

    answered = client.post(f"/api/runs/{run_id}/approve/", json={})
    run = wait_until_finished(client, run_id)

    assert answered.status_code == 202
    assert run["reason"] == "completed"
    (step,) = tool_messages(client, conversation)
    assert step["content"] == "ship it"
    after = sse_events(client, run_id, last_event_id=until_paused[-1]["seq"])
    given = [e for e in after if e["type"] == "tool.approval_given"]
    assert [e["approved"] for e in given] == [True]
    assert client.post(f"/api/runs/{run_id}/approve/", json={}).status_code == 409


def test_deny_tells_the_model_and_the_run_goes_on(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([call("testing__echo", {"text": "rm -rf"}), {"text": ["Ok, not."]}])
    conversation, run_id = start_conversation(client, "Do it")
    processes.wait_for(lambda: client.get(f"/api/runs/{run_id}/").json()["pending_approval"], 30)
    bad = client.post(f"/api/runs/{run_id}/deny/", json={"call_id": "nope"})
    assert bad.status_code == 400
    assert client.get(f"/api/runs/{run_id}/").json()["status"] == "paused"

    denied = client.post(f"/api/runs/{run_id}/deny/", json={})
    run = wait_until_finished(client, run_id)

    assert denied.status_code == 202
    assert run["reason"] == "completed"
    (step,) = tool_messages(client, conversation)
    assert "declined" in str(step["content"])
    told = json.dumps(fake_provider.requests[-1]["messages"])
    assert "The user declined this call." in told


def test_stop_while_a_call_waits_for_approval_ends_the_run_and_the_call_never_runs(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([call("testing__echo", {"text": "never"}), {"text": ["No."]}])
    conversation, run_id = start_conversation(client, "Say never")
    processes.wait_for(lambda: client.get(f"/api/runs/{run_id}/").json()["pending_approval"], 30)
    asked = len(fake_provider.requests)

    assert client.post(f"/api/runs/{run_id}/cancel/").status_code == 202
    run = wait_until_finished(client, run_id)

    assert (run["reason"], run["pending_approval"], run["tool_calls"]) == ("cancelled", [], 0)
    (step,) = tool_messages(client, conversation)
    assert step["metadata"]["ok"] is False
    assert step["content"] == "Not run: the run was stopped before you answered."
    assert len(fake_provider.requests) == asked  # the model was not asked again
    assert client.post(f"/api/runs/{run_id}/approve/", json={}).status_code == 409


def test_stop_interrupts_a_long_call_and_the_server_stays_usable(
    client: httpx.Client, fake_provider: FakeServer, mcp_stack: OracleStack
) -> None:
    fake_provider.set_script([call("testing__sleep", {"seconds": 60}), {"text": ["Slept."]}])
    _, run_id = start_conversation(client, "Sleep a minute")
    processes.wait_for(
        lambda: any(e["type"] == "tool.progress" for e in _events_so_far(client, run_id)), 30
    )

    stopped_at = time.monotonic()
    assert client.post(f"/api/runs/{run_id}/cancel/").status_code == 202
    run = wait_until_finished(client, run_id)
    took = time.monotonic() - stopped_at

    assert run["reason"] == "cancelled"
    assert took < 5  # within a second of the worker seeing it, plus this test's polling
    fake_provider.set_script([call("testing__pid", {}), {"text": ["Still here."]}])
    _, again = start_conversation(client, "Are you there?")
    assert wait_until_finished(client, again)["reason"] == "completed"


def test_the_time_limit_interrupts_a_long_call(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    assert client.patch("/api/settings/", json={"timeout_seconds": 10}).status_code == 200
    try:
        fake_provider.set_script([call("testing__sleep", {"seconds": 60}), {"text": ["Slept."]}])
        _, run_id = start_conversation(client, "Sleep a minute")
        run = wait_until_finished(client, run_id, timeout=30)
    finally:
        client.patch("/api/settings/", json={"timeout_seconds": 120})

    assert run["reason"] == "timeout"
    assert run["elapsed_ms"] < 13_000  # the limit (10 s) and the cut within a second


def pid_of_testing_server(client: httpx.Client, fake_provider: FakeServer) -> int:
    fake_provider.set_script([call("testing__pid", {}), {"text": ["Ok."]}])
    conversation, run_id = start_conversation(client, "Your pid?")
    wait_until_finished(client, run_id)
    return int(str(tool_messages(client, conversation)[0]["content"]))


def server_processes(text: str) -> list[str]:
    """The live processes of servers whose command line holds `text`: each server's own,
    not bubblewrap's around it (its sandbox, agents/mcp_sandbox.py)."""
    return [
        line
        for line in processes.processes_mentioning(text)
        if not line.split(": ", 1)[1].startswith(("bwrap ", "/usr/bin/bwrap "))
    ]


def stack_testing_server_pid(stack: OracleStack) -> int:
    """The stack's testing server's pid as this machine knows it (the pid it reports is
    its sandbox's own)."""
    workers = {worker.pid for worker in stack.workers.values()}

    def of_the_stack(pid: int) -> bool:
        while pid > 1 and pid not in workers:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        return pid in workers

    (pid,) = [
        int(line.split(":")[0])
        for line in server_processes("tests.mcp.testing_server --hostile")
        if of_the_stack(int(line.split(":")[0]))
    ]
    return pid


def test_a_server_killed_between_calls_is_started_again(
    client: httpx.Client, fake_provider: FakeServer, mcp_stack: OracleStack
) -> None:
    pid_of_testing_server(client, fake_provider)
    first = stack_testing_server_pid(mcp_stack)
    pid_of_testing_server(client, fake_provider)
    assert stack_testing_server_pid(mcp_stack) == first  # one process, every run
    os.kill(first, signal.SIGKILL)
    time.sleep(0.5)

    fake_provider.set_script([call("testing__pid", {}), {"text": ["Ok."]}])
    conversation, run_id = start_conversation(client, "Your pid now?")
    run = wait_until_finished(client, run_id)

    (step,) = tool_messages(client, conversation)
    assert run["reason"] == "completed"
    assert step["metadata"]["ok"] is True
    assert stack_testing_server_pid(mcp_stack) != first


def test_a_servers_environment_holds_none_of_oracles_secrets(
    client: httpx.Client, fake_provider: FakeServer, mcp_stack: OracleStack
) -> None:
    fake_provider.set_script([call("testing__environment", {}), {"text": ["Ok."]}])
    conversation, run_id = start_conversation(client, "Your environment?")
    wait_until_finished(client, run_id)

    (step,) = tool_messages(client, conversation)
    environment = json.loads(str(step["content"]))
    assert environment["PYTHONPATH"] == str(ROOT)  # what its config gives it
    for secret in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "ORACLE_API_KEY"):
        assert secret not in environment
        assert mcp_stack.env[secret] not in step["content"]


def _events_so_far(client: httpx.Client, run_id: str) -> list[dict[str, object]]:
    run = client.get(f"/api/runs/{run_id}/").json()
    if run["status"] == "finished":
        return sse_events(client, run_id)
    # The stream of a running run does not end: read the stored events through the page.
    conversation = client.get(f"/api/conversations/{run['conversation_id']}/").json()
    return [
        {"type": "tool.progress"}
        for m in conversation["messages"]
        if m["role"] == "tool" and m["metadata"].get("status") == "running"
    ]


@pytest.mark.parametrize("how", ["stopped", "killed"])
def test_a_workers_stdio_servers_start_with_it_and_end_with_it(how: str, tmp_path: Path) -> None:
    tag = f"worker-{how}-{processes.free_port()}"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"testing": mcp_testing_server("--tag", tag)}}))
    worker = processes.start_worker(
        tmp_path / "worker.log",
        name=f"mcp-{how}",
        env=processes.base_env(ORACLE_MCP_SERVERS=str(config)),
    )
    try:
        # Started when the worker is, before any run asks for it: once.
        processes.wait_for(lambda: len(server_processes(tag)) == 1, 60)
        (server,) = server_processes(tag)
        assert "tests.mcp.testing_server" in server
    finally:
        processes.stop(worker, signal.SIGTERM if how == "stopped" else signal.SIGKILL)

    processes.wait_for(lambda: not processes.processes_mentioning(tag), 10)
