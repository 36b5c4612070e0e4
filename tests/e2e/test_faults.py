"""Nothing lost, nothing stuck: the product as `make run` starts it, with its parts
killed mid-run. Each test checks that the stored answer equals what the model sent
(nothing lost, nothing doubled), that the run ends or goes on by itself, and that
the stack serves again with no one restarting anything by hand."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.served import Listener, PageSocket, ServedOracle, SystemRedis

pytestmark = pytest.mark.timeout(240)

CHUNKS = [f"w{i} " for i in range(120)]
SENT = "".join(CHUNKS)
STREAM = {"text": CHUNKS, "chunk_delay": 0.025}  # three seconds of answer
DONE = {"text": ["All ", "done."]}


def answers(client: httpx.Client, conversation: str) -> list[dict[str, Any]]:
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    return [m for m in messages if m["role"] == "assistant"]


def wait_streaming(client: httpx.Client, conversation: str, words: int = 10) -> None:
    """Until the stored answer has `words` words (the run is mid-stream)."""
    processes.wait_for(
        lambda: (a := answers(client, conversation)) and len(a[-1]["content"].split()) >= words,
        30,
        interval=0.05,
    )


def assert_serving(served: ServedOracle, client: httpx.Client, provider: FakeServer) -> None:
    """A new question is answered: web, broker, worker and channel layer all back."""
    served.wait_healthy(60)
    provider.set_script([{"text": ["Back ", "again."]}])
    conversation, run_id = start_conversation(client, "Still there?")
    assert wait_until_finished(client, run_id, 60)["reason"] == "completed"
    assert answers(client, conversation)[-1]["content"] == "Back again."


@contextmanager
def serving(folder: Path, provider: FakeServer, **env: str) -> Iterator[ServedOracle]:
    """`manage.py serve` answering with the fake provider; stopped afterwards. With a
    slow tool (`wait`), and a worker given a second to end its runs when stopped."""
    folder.mkdir(exist_ok=True)
    oracle = ServedOracle(
        folder,
        ORACLE_RUN_HEARTBEAT_TIMEOUT="3",
        ORACLE_AUTO_TITLES="false",  # the tests count the provider's calls
        ORACLE_TOOLS="agents.testing.tools.wait",
        ORACLE_WORKER_SHUTDOWN_GRACE="1",
        **processes.model_env(provider),
        **env,
    ).start()
    try:
        yield oracle
    finally:
        oracle.stop()


@dataclass
class Streaming:
    """A user's run, mid-stream, followed by an SSE client and (`page`) a page's socket."""

    client: httpx.Client
    conversation: str
    run_id: str
    listener: Listener
    page: PageSocket | None

    def assert_whole(self) -> None:
        """It completed, and what was stored and shown is what the model sent."""
        self.listener.wait(60)
        assert wait_until_finished(self.client, self.run_id, 60)["reason"] == "completed"
        assert answers(self.client, self.conversation)[-1]["content"] == SENT
        assert self.listener.text == SENT
        if self.page is not None:
            self.page.wait(60)
            assert self.page.text == SENT


def start_streaming(
    served: ServedOracle, provider: FakeServer, username: str, *, page: bool = False,
    then: list[dict[str, Any]] | None = None, words: int = 10,
) -> Streaming:  # fmt: skip
    """A user asks; the model streams `STREAM` (then answers `then`); returns mid-stream."""
    token = served.create_user(username)
    client = served.client(token)
    provider.set_script([STREAM, *(then or [])])
    conversation, run_id = start_conversation(client, "Talk for a while")
    listener = Listener(served, token, run_id)
    socket = PageSocket(served, username, conversation, run_id) if page else None
    wait_streaming(client, conversation, words)
    return Streaming(client, conversation, run_id, listener, socket)


# One served Oracle for the tests on the embedded Redis, one for those on a system Redis:
# each test ends by checking that the product serves again with no one restarting
# anything by hand, so the next test starts from a product that came back by itself
# (and `manage.py serve` is not started nine times: seconds of CPU each).


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, fake_provider: FakeServer
) -> Iterator[ServedOracle]:
    with serving(tmp_path_factory.mktemp("served"), fake_provider) as oracle:
        yield oracle


@pytest.fixture(scope="module")
def module_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SystemRedis]:
    server = SystemRedis(tmp_path_factory.mktemp("system-redis")).start()
    try:
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill()


@pytest.fixture(scope="module")
def served_on_system_redis(
    tmp_path_factory: pytest.TempPathFactory, fake_provider: FakeServer, module_redis: SystemRedis
) -> Iterator[ServedOracle]:
    folder = tmp_path_factory.mktemp("served-on-system-redis")
    with serving(folder, fake_provider, REDIS_URL=module_redis.url) as oracle:
        yield oracle


@pytest.fixture
def system_redis(module_redis: SystemRedis) -> Iterator[SystemRedis]:
    """The system Redis, started again after the test if the test left it down."""
    yield module_redis
    if module_redis.process is None or module_redis.process.poll() is not None:
        module_redis.start()


def test_the_embedded_redis_killed_mid_run_loses_nothing_and_comes_back(
    served: ServedOracle, fake_provider: FakeServer
) -> None:
    run = start_streaming(served, fake_provider, "rita", page=True)
    worker = served.child("worker")

    served.kill_embedded_redis()  # make run's supervisor starts it again

    run.assert_whole()
    assert served.child("worker") == worker  # the worker rode it out
    assert "The embedded Redis is back" in served.log.read_text()
    assert_serving(served, run.client, fake_provider)


def test_a_system_redis_restarted_mid_run_loses_nothing(
    served_on_system_redis: ServedOracle, system_redis: SystemRedis, fake_provider: FakeServer
) -> None:
    served = served_on_system_redis
    run = start_streaming(served, fake_provider, "sam", page=True)
    worker = served.child("worker")

    system_redis.kill()
    time.sleep(1.5)
    system_redis.start()  # empty: no queue, no groups

    run.assert_whole()
    assert served.child("worker") == worker
    assert_serving(served, run.client, fake_provider)


def test_a_message_posted_while_redis_is_down_is_answered(
    served_on_system_redis: ServedOracle, system_redis: SystemRedis, fake_provider: FakeServer
) -> None:
    served = served_on_system_redis
    client = served.client(served.create_user("tess"))
    system_redis.kill()
    status, health = processes.get_json(f"{served.url}/healthz")
    assert status == 503 and health["failing"] == ["redis"]
    fake_provider.set_script([{"text": CHUNKS[:10]}])

    posted = time.monotonic()
    conversation, run_id = start_conversation(client, "Anyone home?")  # 202, not a 500
    # Not held up by Redis either: the post used to wait 19 s for the result store's 20
    # reconnection tries (a hang, not a speed: it takes well under a second now).
    assert time.monotonic() - posted < 10

    run = wait_until_finished(client, run_id, 60)  # a worker took it up, Redis still down
    assert run["reason"] == "completed"
    assert answers(client, conversation)[-1]["content"] == "".join(CHUNKS[:10])
    system_redis.start()
    assert_serving(served, client, fake_provider)


def test_stop_works_while_redis_is_down(
    served_on_system_redis: ServedOracle, system_redis: SystemRedis, fake_provider: FakeServer
) -> None:
    served = served_on_system_redis
    client = served.client(served.create_user("uri"))
    fake_provider.set_script([{"text": CHUNKS, "chunk_delay": 0.25}])  # thirty seconds
    conversation, run_id = start_conversation(client, "Talk for a long while")
    wait_streaming(client, conversation, words=4)
    system_redis.kill()

    assert client.post(f"/api/runs/{run_id}/cancel/").status_code == 202
    run = wait_until_finished(client, run_id, 15)  # the worker reads the stop from the row

    assert run["reason"] == "cancelled"
    kept = answers(client, conversation)[-1]["content"]
    streamed = kept.split("\n\n", 1)[1]  # after the explanation
    assert len(streamed.split()) >= 4 and SENT.startswith(streamed)
    assert len(streamed.split()) < len(CHUNKS)
    system_redis.start()
    assert_serving(served, client, fake_provider)


def completed(client: httpx.Client, run_id: str, timeout: float = 90) -> dict[str, Any]:
    """The run once it completed (it may end `interrupted` on the way and be resumed)."""
    return processes.wait_for(
        lambda: (run := client.get(f"/api/runs/{run_id}/").json())["reason"] == "completed" and run,
        timeout,
    )


def assert_resumed_by_itself(run: Streaming) -> None:
    """The run ended `interrupted` keeping a prefix of what was sent (nothing doubled),
    and Oracle resumed it by itself to the end."""
    completed(run.client, run.run_id)
    messages = run.client.get(f"/api/conversations/{run.conversation}/").json()["messages"]
    kept = next(m["content"] for m in messages if m["termination_reason"] == "interrupted")
    streamed = kept.split("\n\n", 1)[1]  # after the explanation
    assert len(streamed.split()) >= 10
    assert SENT.startswith(streamed)
    notices = [m["content"] for m in messages if m["role"] == "system"]
    assert any("(automatic retry 1 of 2)" in notice for notice in notices)
    assert answers(run.client, run.conversation)[-1]["content"] == "All done."


def test_a_killed_worker_is_replaced_and_its_run_keeps_what_it_streamed(
    served: ServedOracle, fake_provider: FakeServer
) -> None:
    run = start_streaming(served, fake_provider, "uma", then=[DONE], words=20)
    worker = served.child("worker")

    served.kill(worker)

    run.listener.wait(60)  # the replacement worker's sweeper ends the run as interrupted
    assert SENT.startswith(run.listener.text)  # what the client saw: nothing doubled
    assert served.child("worker") != worker
    assert_resumed_by_itself(run)
    assert_serving(served, run.client, fake_provider)


def test_a_worker_killed_mid_tool_is_resumed_by_running_the_tool_again(
    served: ServedOracle, fake_provider: FakeServer
) -> None:
    wait = {"tool_calls": [{"id": "call_wait", "name": "wait", "arguments": {"seconds": 4}}]}
    client = served.client(served.create_user("xena"))
    fake_provider.set_script([{"text": ["Let ", "me ", "wait."], **wait}, DONE])
    earlier = len(fake_provider.requests)  # the provider serves the whole session
    conversation, run_id = start_conversation(client, "Wait for it")

    def steps() -> list[dict[str, Any]]:
        messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
        return [m for m in messages if m["role"] == "tool"]

    processes.wait_for(lambda: steps() and steps()[0]["metadata"]["status"] == "running", 30)
    served.kill(served.child("worker"))  # the tool is waiting

    completed(client, run_id)  # resumed by itself, on the worker started again

    (step,) = steps()  # the same step, finished: nothing doubled
    assert (step["content"], step["metadata"]["ok"]) == ("Waited 4 seconds.", True)
    texts = [m["content"] for m in answers(client, conversation)]
    assert texts[0] == "Let me wait." and texts[-1] == "All done."
    assert sum("Let me wait." in text for text in texts) == 1
    asked = [r["messages"] for r in fake_provider.requests[earlier:]]
    assert len(asked) == 2  # the step was not asked for again: its tool was run again
    assert asked[1][-1] == {"role": "tool", "tool_call_id": "call_wait",
                            "content": "Waited 4 seconds."}  # fmt: skip
    assert_serving(served, client, fake_provider)


def test_a_killed_daphne_is_replaced_and_the_stream_resumes_exactly(
    served: ServedOracle, fake_provider: FakeServer
) -> None:
    run = start_streaming(served, fake_provider, "vic")

    served.kill(served.child("daphne"))

    run.assert_whole()
    assert run.listener.reconnects >= 1
    seqs = [event["seq"] for event in run.listener.events]
    assert seqs == list(range(1, len(seqs) + 1))  # every event once, in order
    assert_serving(served, run.client, fake_provider)


def test_a_stopped_worker_ends_its_runs_as_interrupted_at_once(
    served: ServedOracle, fake_provider: FakeServer
) -> None:
    run = start_streaming(served, fake_provider, "wes", then=[DONE])

    served.kill(served.child("worker"), signal.SIGTERM)  # a deploy, a Ctrl-C

    run.listener.wait(20)  # at once: no waiting for a heartbeat to go stale
    messages = run.client.get(f"/api/conversations/{run.conversation}/").json()
    assert any("was stopped" in m["content"] for m in messages["messages"])
    assert_resumed_by_itself(run)
    assert_serving(served, run.client, fake_provider)


def test_a_warning_given_just_before_a_worker_is_lost_is_logged_and_shown_once(
    served: ServedOracle, fake_provider: FakeServer
) -> None:
    def calculate(expression: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "calculator", "arguments": {"expression": expression}}]}

    client = served.client(served.create_user("wanda"))
    # With 5 iterations the warning comes before the fourth: two are left.
    assert client.patch("/api/settings/", json={"max_iterations": 5}).status_code == 200
    steps = [calculate("1+1"), calculate("2+2"), calculate("3+3")]
    fake_provider.set_script([*steps, STREAM, DONE])
    conversation, run_id = start_conversation(client, "Add, then talk")
    wait_streaming(client, conversation)  # the fourth call streams: the warning is out
    served.kill(served.child("worker"))

    completed(client, run_id)  # resumed by itself from before the fourth call

    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    notices = [m["content"] for m in messages if m["role"] == "system"]
    log = Path(served.env["ORACLE_VAR_DIR"]) / "log" / "limits.jsonl"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    logged_warnings = [
        line for line in logged
        if line["run_id"] == run_id and line.get("severity") == "warning"
        and line["event"] == "system.notice"
    ]  # fmt: skip
    assert [n for n in notices if n.startswith("Approaching")] == [notices[0]]  # once
    assert len(logged_warnings) == 1, logged_warnings
    assert_serving(served, client, fake_provider)
