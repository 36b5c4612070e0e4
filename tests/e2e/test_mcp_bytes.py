"""Big MCP results on the real stack (issue 38, findings 6 and 12): a worker hosting our
testing server (its second one, `testing_`, whose tools act without asking) reads no
answer past ORACLE_TOOL_RESULT_MAX_BYTES, a conversation's pictures stay few, and a
storm of progress notices is stored and sent as a few events."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import sse_events, start_conversation, wait_until_finished
from tests.stack import OracleStack

NOTE = "(ORACLE_TOOL_RESULT_MAX_BYTES), so Oracle stopped reading it there"


@pytest.fixture(scope="module")
def client(mcp_stack: OracleStack) -> Iterator[httpx.Client]:
    with mcp_stack.client(mcp_stack.create_user("bianca")) as client:
        processes.wait_for(
            lambda: client.get("/healthz").json().get("mcp_servers", {}).get("testing_") == "ready",
            30,
        )
        yield client


def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def worker_pid(stack: OracleStack) -> int:
    (worker,) = stack.workers.values()
    return worker.pid


def peak_megabytes(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) / 1024  # type: ignore[index]


def test_a_30_mb_result_is_cut_and_the_worker_does_not_grow_by_it(
    mcp_stack: OracleStack, client: httpx.Client, fake_provider: FakeServer
) -> None:
    fake_provider.set_script(
        [call("testing___huge", {"chars": 30_000_000}), {"text": ["It was long."]}]
    )
    pid = worker_pid(mcp_stack)
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # its peak, from now
    before = peak_megabytes(pid)

    _, run_id = start_conversation(client, "Bring me everything")
    run = wait_until_finished(client, run_id)

    grew = peak_megabytes(pid) - before
    assert run["reason"] == "completed"
    (result,) = [e for e in sse_events(client, run_id) if e["type"] == "tool.result"]
    assert result["ok"] is True and NOTE in result["content"]
    assert grew < 30, f"the worker grew by {grew:.0f} MB for a 30 MB result"


def test_ten_big_pictures_leave_a_light_conversation(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    fake_provider.set_script(
        [call("testing___pictures", {"count": 10, "size": 1_900_000}), {"text": ["Seen."]}]
    )
    conversation, run_id = start_conversation(client, "Show me the pictures")
    run = wait_until_finished(client, run_id)

    assert run["reason"] == "completed"
    (result,) = [e for e in sse_events(client, run_id) if e["type"] == "tool.result"]
    assert len(result.get("attachments") or []) <= 2
    assert NOTE in result["content"]
    stored = client.get(f"/api/conversations/{conversation}/")
    assert len(stored.content) < 6_000_000, f"{len(stored.content):,} bytes"


def test_a_storm_of_5000_progress_notices_is_stored_and_sent_as_a_few(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([call("testing___storm", {"count": 5000}), {"text": ["Calm."]}])
    _, run_id = start_conversation(client, "Make a storm")
    run = wait_until_finished(client, run_id)

    assert run["reason"] == "completed"
    events = sse_events(client, run_id)  # what a page reconnecting reads: the stored rows
    progress = [e for e in events if e["type"] == "tool.progress"]
    assert 1 <= len(progress) <= 30, f"{len(progress)} progress events stored"
    assert (progress[-1]["progress"], progress[-1]["total"]) == (5000, 5000)


@pytest.mark.parametrize("value", ["lots", "1000", "-5"])
def test_a_bad_byte_cap_is_named_by_manage_py_check(value: str) -> None:
    env = processes.base_env(ORACLE_TOOL_RESULT_MAX_BYTES=value)
    check = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert check.returncode != 0
    assert (
        "ORACLE_TOOL_RESULT_MAX_BYTES must be a whole number of bytes, at least 65,536 "
        f"(64 KiB), not {value!r}."
    ) in check.stderr
