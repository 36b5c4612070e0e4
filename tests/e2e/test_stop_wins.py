"""Stop always wins (SPEC 6a), through the whole product: a person presses Approve and
Stop at the same moment (two Stops, as a double click sends), and whatever order the
web processes and the worker take them in, every Stop is answered 202, and the approved
tool (it writes a file, with the time, when it acts) never begins after a Stop reached
the database: a run whose Stop came first ends cancelled with the call not run. And a
wait for approval that lasts past `ORACLE_PAUSE_EXPIRY_SECONDS` ends the run."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.mcp.served import mcp_testing_server
from tests.redis_dbs import SCALE_OUT_REDIS_DB
from tests.stack import OracleStack

EXPIRY = 6  # seconds a run may wait for its approval on this stack
ROUNDS = 8


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file the `mark` tool appends to each time it acts."""
    return tmp_path_factory.mktemp("marks") / "acted.marks"


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, fake_provider: FakeServer, marks: Path
) -> Iterator[OracleStack]:
    """The product with the testing MCP server, whose `mark` asks for approval, a pause
    expiry of a few seconds and a sweeper that looks every second."""
    folder = tmp_path_factory.mktemp("stop-wins")
    config = folder / "mcp.json"
    server = mcp_testing_server(
        "--marking-tool", "mark", approve_tools=["mark"], env={"ORACLE_TEST_MARK_FILE": str(marks)}
    )
    config.write_text(json.dumps({"mcpServers": {"testing": server}}))
    oracle = OracleStack(
        folder,
        redis_db=SCALE_OUT_REDIS_DB,  # the scale-out test's stack lives in its module only
        ORACLE_MCP_SERVERS=str(config),
        ORACLE_PAUSE_EXPIRY_SECONDS=str(EXPIRY),
        ORACLE_RUN_HEARTBEAT_TIMEOUT="3",  # the sweeper looks every second
        **processes.model_env(fake_provider),
    )
    oracle.start()
    try:
        yield oracle
    finally:
        oracle.stop()


@pytest.fixture(scope="module")
def token(stack: OracleStack) -> str:
    return stack.create_user("stella")


@pytest.fixture(scope="module")
def client(stack: OracleStack, token: str) -> Iterator[httpx.Client]:
    with stack.client(token) as client:
        yield client


def waiting_for_approval(client: httpx.Client, fake_provider: FakeServer, text: str) -> str:
    """A new run, paused for the approval of a call of `mark`: its id."""
    fake_provider.set_script(
        [{"tool_calls": [{"name": "testing__mark", "arguments": {"text": text}}]},
         {"text": ["Marked."]}]
    )  # fmt: skip
    _, run_id = start_conversation(client, f"Mark {text}")
    processes.wait_for(lambda: client.get(f"/api/runs/{run_id}/").json()["pending_approval"], 30)
    return run_id


def tool_steps(client: httpx.Client, conversation: str) -> list[dict[str, object]]:
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    return [m for m in messages if m["role"] == "tool"]


def at_once(stack: OracleStack, token: str, run_id: str, paths: list[str]) -> list[int]:
    """POST each path at the same moment, each from a client of its own: the statuses."""
    clients = [stack.client(token) for _ in paths]
    for each in clients:
        each.get("/healthz")  # connected before the race starts
    start = threading.Barrier(len(paths))

    def post(each: httpx.Client, path: str) -> int:
        start.wait()
        return each.post(f"/api/runs/{run_id}/{path}/", json={}).status_code

    try:
        with ThreadPoolExecutor(len(paths)) as pool:
            return list(pool.map(post, clients, paths))
    finally:
        for each in clients:
            each.close()


def acted_at(marks: Path, text: str) -> float | None:
    """When the `mark` tool acted on `text` (the time it wrote), or None."""
    lines = marks.read_text().splitlines() if marks.exists() else []
    times = [float(line.split("\t")[1]) for line in lines if line.split("\t")[0] == text]
    assert len(times) <= 1, f"{text}: the tool acted {len(times)} times"
    return times[0] if times else None


def stop_recorded_at(stack: OracleStack, run_id: str) -> float | None:
    """When the run's Stop was written (None: it came after the run had finished)."""
    code = (
        "from chat.models import Run;"
        f"asked = Run.objects.get(pk={run_id!r}).cancel_requested_at;"
        "print(asked.timestamp() if asked else '')"
    )
    printed = processes.shell(code, env=stack.env)
    assert printed.returncode == 0, printed.stderr
    value = printed.stdout.strip().splitlines()[-1] if printed.stdout.strip() else ""
    return float(value) if value else None


def test_stop_sent_with_approve_always_wins_and_no_call_begins_after_it(
    stack: OracleStack, token: str, client: httpx.Client, fake_provider: FakeServer, marks: Path
) -> None:
    approvals, stopped_first = [], 0
    for round_ in range(ROUNDS):
        run_id = waiting_for_approval(client, fake_provider, f"round {round_}")
        # The Approve first, then the Stops, or the Stops first: both orders.
        paths = ["approve", "cancel", "cancel"] if round_ % 2 else ["cancel", "cancel", "approve"]

        answered = list(zip(paths, at_once(stack, token, run_id, paths), strict=True))
        run = wait_until_finished(client, run_id)

        stops = [code for path, code in answered if path == "cancel"]
        approvals += [code for path, code in answered if path == "approve"]
        assert stops == [202, 202], (round_, answered)
        acted = acted_at(marks, f"round {round_}")
        if acted is None:
            assert (run["reason"], run["tool_calls"]) == ("cancelled", 0), (round_, run)
            (step,) = tool_steps(client, run["conversation_id"])
            assert step["metadata"]["ok"] is False
            assert step["metadata"]["not_run"] in ("unanswered", "stopped"), step
            stopped_first += 1
        else:
            # The worker took the Approve up before any Stop reached the database (the
            # machine is loaded, the requests race): the call began before the Stop, so
            # running it lost no Stop. Nothing began after one.
            asked = stop_recorded_at(stack, run_id)
            assert asked is None or asked > acted, (round_, asked, acted, run)
    assert set(approvals) <= {202, 409}
    assert stopped_first  # the Stop, taken first, was not lost to the Approve


def test_a_wait_for_approval_past_the_expiry_ends_the_run_and_continue_goes_on(
    client: httpx.Client, fake_provider: FakeServer, marks: Path
) -> None:
    run_id = waiting_for_approval(client, fake_provider, "too late")
    paused_at = time.monotonic()

    run = wait_until_finished(client, run_id, timeout=EXPIRY + 30)

    assert time.monotonic() - paused_at >= EXPIRY - 1  # not before its time
    assert (run["reason"], run["pending_approval"], run["tool_calls"]) == (
        "pause_expired", [], 0,
    )  # fmt: skip
    (step,) = tool_steps(client, run["conversation_id"])
    assert (step["metadata"]["not_run"], step["content"]) == (
        "expired", "Not run: the approval expired before you answered.",
    )  # fmt: skip
    messages = client.get(f"/api/conversations/{run['conversation_id']}/").json()["messages"]
    assert messages[-1]["content"].startswith("The wait for your answer expired.")
    assert client.post(f"/api/runs/{run_id}/approve/", json={}).status_code == 409
    assert acted_at(marks, "too late") is None

    fake_provider.set_script([{"text": ["Going on without it."]}])
    assert client.post(f"/api/runs/{run_id}/continue/").status_code == 202
    assert wait_until_finished(client, run_id)["reason"] == "completed"
