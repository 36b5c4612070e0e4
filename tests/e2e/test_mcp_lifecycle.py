"""MCP servers' lives on real workers, as a user and an operator see them: servers start
in the background (a mute one delays no run), a server hung by a call is restarted
before the next one, a killed one shows "stopped" at once, and two workers that
disagree are both shown. One stack for the module: `mcp-server-time`, our testing
server (2 s a call) and a command that never answers its handshake.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_mcp import call, server_processes, tool_messages
from tests.e2e.test_runs_api import sse_events, start_conversation, wait_until_finished
from tests.e2e.test_websocket import log_in
from tests.mcp.served import mcp_testing_server, mcp_time_server
from tests.stack import OracleStack

TAG = f"lifecycle-{processes.free_port()}"
MUTE = {"command": sys.executable, "args": ["-c", f"import time; time.sleep(600)  # {TAG}"]}


@pytest.fixture(scope="module")
def lifecycle_stack(
    tmp_path_factory: pytest.TempPathFactory, fake_provider: FakeServer
) -> Iterator[OracleStack]:
    folder = tmp_path_factory.mktemp("mcp-lifecycle")
    config = folder / "mcp.json"
    servers = {
        "time": mcp_time_server(),
        "testing": mcp_testing_server("--tag", TAG, timeout_seconds=2),
        "mute": MUTE,
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    oracle = OracleStack(
        folder, ORACLE_MCP_SERVERS=str(config), **processes.model_env(fake_provider)
    )
    oracle.start()
    try:
        yield oracle
    finally:
        oracle.stop()


@pytest.fixture(scope="module")
def client(lifecycle_stack: OracleStack) -> Iterator[httpx.Client]:
    with lifecycle_stack.client(lifecycle_stack.create_user("lena")) as client:
        yield client


def tools_page(stack: OracleStack) -> str:
    """The Tools page as lena's browser gets it."""
    with httpx.Client(base_url=stack.url, cookies={"sessionid": log_in(stack, "lena")}) as page:
        return page.get("/tools/").text


def states(client: httpx.Client) -> dict[str, str]:
    return client.get("/healthz").json().get("mcp_servers", {})


def pid_of_testing(client: httpx.Client, fake_provider: FakeServer) -> int:
    fake_provider.set_script([call("testing__pid", {}), {"text": ["Ok."]}])
    conversation, run_id = start_conversation(client, "Your pid?")
    wait_until_finished(client, run_id)
    return int(str(tool_messages(client, conversation)[-1]["content"]))


def host_pids() -> set[int]:
    """The testing servers' processes as this machine numbers them (inside its sandbox
    a server is always pid 2)."""
    return {int(line.split(":")[0]) for line in server_processes(f"--tag {TAG}")}


def test_a_mute_server_delays_no_run_of_a_fresh_worker(
    client: httpx.Client, fake_provider: FakeServer, lifecycle_stack: OracleStack
) -> None:
    fake_provider.set_script([{"text": ["Hello."]}])
    _, early = start_conversation(client, "Hello")  # the worker has just started
    early_run = wait_until_finished(client, early)
    processes.wait_for(lambda: states(client)["time"] == "ready", 20)

    assert states(client)["mute"] == "starting"  # published as each one is known
    fake_provider.set_script(
        [call("time__get_current_time", {"timezone": "UTC"}), {"text": ["It is now."]}]
    )
    _, run_id = start_conversation(client, "What time is it?")
    run = wait_until_finished(client, run_id)

    assert (run["reason"], run["tool_calls"]) == ("completed", 1)
    # Done while the mute server still starts (it fails only at its 30 s start timeout):
    # no run waited for it. A state, not a stopwatch: a loaded machine is slow, not wrong.
    assert states(client)["mute"] == "starting"
    assert early_run["reason"] == "completed"
    notices = [e["text"] for e in sse_events(client, early) if e["type"] == "system.notice"]
    assert any("'mute'" in text and "still starting" in text for text in notices)


def test_a_server_hung_by_a_call_is_restarted_before_the_next_call(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    processes.wait_for(lambda: states(client)["testing"] == "ready", 20)
    pid_of_testing(client, fake_provider)
    first = host_pids()
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        with httpx.Client(base_url=str(client.base_url)) as watcher:
            while not done.is_set():
                seen.add(watcher.get("/healthz").json()["mcp_servers"]["testing"])
                time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        fake_provider.set_script([call("testing__block", {"seconds": 60}), {"text": ["Hm."]}])
        conversation, run_id = start_conversation(client, "Block it")
        hung = wait_until_finished(client, run_id)
        (step,) = tool_messages(client, conversation)
        started = time.monotonic()
        pid_of_testing(client, fake_provider)
        took = time.monotonic() - started
        processes.wait_for(lambda: len(host_pids()) == 1, 10)  # the blocked one killed
        again = host_pids()
        processes.wait_for(lambda: "ready" in seen and len(seen) > 1, 10)
    finally:
        done.set()
        watcher.join(5)

    assert hung["reason"] == "completed"
    assert "did not answer within 2 s" in str(step["content"])
    assert again.isdisjoint(first)  # a fresh process, not the one still blocked
    assert took < 15  # not the block's 60 s
    assert "restarting" in seen


def test_a_killed_server_shows_stopped_before_any_call(
    client: httpx.Client, fake_provider: FakeServer, lifecycle_stack: OracleStack
) -> None:
    processes.wait_for(lambda: states(client)["testing"] == "ready", 20)
    (line,) = server_processes(f"--tag {TAG}")
    os.kill(int(line.split(":")[0]), signal.SIGKILL)

    processes.wait_for(lambda: states(client)["testing"] == "stopped", 5)
    page = tools_page(lifecycle_stack)
    assert 'id="server-testing" data-state="stopped"' in page
    assert "its process exited" in page
    pid_of_testing(client, fake_provider)  # the next call starts it again
    assert states(client)["testing"] == "ready"


def test_two_workers_that_disagree_are_both_shown(
    client: httpx.Client, fake_provider: FakeServer, lifecycle_stack: OracleStack
) -> None:
    second = lifecycle_stack.start_worker()
    processes.wait_for(lambda: len(server_processes(f"--tag {TAG}")) == 2, 30)
    first = next(iter(lifecycle_stack.workers))
    (line,) = [
        line
        for line in server_processes(f"--tag {TAG}")
        if _descends_from(int(line.split(":")[0]), lifecycle_stack.workers[first].pid)
    ]
    processes.wait_for(
        lambda: client.get("/healthz").json().get("mcp_workers", {}).get("testing") is None, 20
    )
    os.kill(int(line.split(":")[0]), signal.SIGKILL)

    def disagree() -> dict[str, str]:
        return client.get("/healthz").json().get("mcp_workers", {}).get("testing", {})

    processes.wait_for(lambda: sorted(disagree().values()) == ["ready", "stopped"], 10)
    health = client.get("/healthz").json()
    page = tools_page(lifecycle_stack)

    assert health["mcp_servers"]["testing"] == "stopped"  # the worst a live worker has
    assert {name.split("@")[0] for name in disagree()} == {first, second}
    assert f'data-worker="{first}@' in page and f'data-worker="{second}@' in page
    assert 'data-state="stopped"' in page


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1 and pid != ancestor:
        stat = Path(f"/proc/{pid}/stat").read_text()
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pid == ancestor
