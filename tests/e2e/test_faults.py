"""Nothing lost, nothing stuck: the product as `make run` starts it, with its parts
killed mid-run. Each test checks that the stored answer equals what the model sent
(nothing lost, nothing doubled), that the run ends or goes on by itself, and that
the stack serves again with no one restarting anything by hand."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
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


@pytest.fixture
def served(tmp_path: Path, fake_provider: FakeServer) -> Iterator[ServedOracle]:
    oracle = ServedOracle(
        tmp_path,
        ORACLE_MODEL="openai/fake-model",
        ORACLE_API_BASE=fake_provider.base_url,
        ORACLE_API_KEY="fake-key",
        ORACLE_RUN_HEARTBEAT_TIMEOUT="3",
    ).start()
    try:
        yield oracle
    finally:
        oracle.stop()


@pytest.fixture
def system_redis(tmp_path: Path) -> Iterator[SystemRedis]:
    folder = tmp_path / "system-redis"
    folder.mkdir()
    server = SystemRedis(folder).start()
    try:
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill()


@pytest.fixture
def served_on_system_redis(
    tmp_path: Path, fake_provider: FakeServer, system_redis: SystemRedis
) -> Iterator[ServedOracle]:
    folder = tmp_path / "served"
    folder.mkdir()
    oracle = ServedOracle(
        folder,
        REDIS_URL=system_redis.url,
        ORACLE_MODEL="openai/fake-model",
        ORACLE_API_BASE=fake_provider.base_url,
        ORACLE_API_KEY="fake-key",
        ORACLE_RUN_HEARTBEAT_TIMEOUT="3",
    ).start()
    try:
        yield oracle
    finally:
        oracle.stop()


def test_the_embedded_redis_killed_mid_run_loses_nothing_and_comes_back(
    served: ServedOracle, fake_provider: FakeServer
) -> None:
    token = served.create_user("rita")
    client = served.client(token)
    fake_provider.set_script([STREAM])
    conversation, run_id = start_conversation(client, "Talk for a while")
    listener = Listener(served, token, run_id)
    page = PageSocket(served, "rita", conversation, run_id)
    wait_streaming(client, conversation)
    worker = served.child("worker")

    served.kill_embedded_redis()  # make run's supervisor starts it again

    listener.wait(60)
    page.wait(60)
    assert page.text == SENT
    run = wait_until_finished(client, run_id, 60)
    assert run["reason"] == "completed"
    assert answers(client, conversation)[-1]["content"] == SENT
    assert listener.text == SENT
    assert served.child("worker") == worker  # the worker rode it out
    assert "The embedded Redis is back" in served.log.read_text()
    assert_serving(served, client, fake_provider)


def test_a_system_redis_restarted_mid_run_loses_nothing(
    served_on_system_redis: ServedOracle, system_redis: SystemRedis, fake_provider: FakeServer
) -> None:
    served = served_on_system_redis
    token = served.create_user("sam")
    client = served.client(token)
    fake_provider.set_script([STREAM])
    conversation, run_id = start_conversation(client, "Talk for a while")
    listener = Listener(served, token, run_id)
    page = PageSocket(served, "sam", conversation, run_id)
    wait_streaming(client, conversation)
    worker = served.child("worker")

    system_redis.kill()
    time.sleep(1.5)
    system_redis.start()  # empty: no queue, no groups

    listener.wait(60)
    page.wait(60)
    assert page.text == SENT
    assert wait_until_finished(client, run_id, 60)["reason"] == "completed"
    assert answers(client, conversation)[-1]["content"] == SENT
    assert listener.text == SENT
    assert served.child("worker") == worker
    assert_serving(served, client, fake_provider)


def test_a_message_posted_while_redis_is_down_is_answered(
    served_on_system_redis: ServedOracle, system_redis: SystemRedis, fake_provider: FakeServer
) -> None:
    served = served_on_system_redis
    client = served.client(served.create_user("tess"))
    system_redis.kill()
    status, health = processes.get_json(f"{served.url}/healthz")
    assert status == 503 and health["failing"] == ["redis"]
    fake_provider.set_script([{"text": CHUNKS[:10]}])

    conversation, run_id = start_conversation(client, "Anyone home?")  # 202, not a 500

    run = wait_until_finished(client, run_id, 60)  # a worker took it up, Redis still down
    assert run["reason"] == "completed"
    assert answers(client, conversation)[-1]["content"] == "".join(CHUNKS[:10])
    system_redis.start()
    assert_serving(served, client, fake_provider)


def test_a_killed_worker_is_replaced_and_its_run_keeps_what_it_streamed(
    served: ServedOracle, fake_provider: FakeServer
) -> None:
    token = served.create_user("uma")
    client = served.client(token)
    fake_provider.set_script([STREAM, {"text": ["All ", "done."]}])
    conversation, run_id = start_conversation(client, "Talk for a while")
    listener = Listener(served, token, run_id)
    wait_streaming(client, conversation, words=20)
    worker = served.child("worker")

    served.kill(worker)

    listener.wait(60)  # the replacement worker's sweeper ends the run as interrupted
    run = wait_until_finished(client, run_id, 60)
    assert run["reason"] == "interrupted"
    kept = answers(client, conversation)[-1]["content"]
    streamed = kept.split("\n\n", 1)[1]  # after the explanation
    assert len(streamed.split()) >= 20
    assert SENT.startswith(streamed)  # a prefix of what was sent: nothing doubled
    assert listener.text == SENT[: len(listener.text)]
    assert SENT.startswith(listener.text) and streamed.startswith(listener.text.strip())
    assert served.child("worker") != worker

    assert client.post(f"/api/runs/{run_id}/continue/").status_code == 202
    assert wait_until_finished(client, run_id, 60)["reason"] == "completed"
    assert answers(client, conversation)[-1]["content"] == "All done."
    assert_serving(served, client, fake_provider)


def test_a_killed_daphne_is_replaced_and_the_stream_resumes_exactly(
    served: ServedOracle, fake_provider: FakeServer
) -> None:
    token = served.create_user("vic")
    client = served.client(token)
    fake_provider.set_script([STREAM])
    conversation, run_id = start_conversation(client, "Talk for a while")
    listener = Listener(served, token, run_id)
    wait_streaming(client, conversation)

    served.kill(served.child("daphne"))

    listener.wait(60)
    assert listener.reconnects >= 1
    assert wait_until_finished(client, run_id, 60)["reason"] == "completed"
    assert answers(client, conversation)[-1]["content"] == SENT
    assert listener.text == SENT
    seqs = [event["seq"] for event in listener.events]
    assert seqs == list(range(1, len(seqs) + 1))  # every event once, in order
    assert_serving(served, client, fake_provider)


def test_a_stopped_worker_ends_its_runs_as_interrupted_at_once(
    tmp_path: Path, fake_provider: FakeServer
) -> None:
    served = ServedOracle(
        tmp_path,
        ORACLE_MODEL="openai/fake-model",
        ORACLE_API_BASE=fake_provider.base_url,
        ORACLE_API_KEY="fake-key",
        ORACLE_WORKER_SHUTDOWN_GRACE="1",
    ).start()
    try:
        client = served.client(served.create_user("wes"))
        fake_provider.set_script([STREAM, {"text": ["All ", "done."]}])
        conversation, run_id = start_conversation(client, "Talk for a while")
        wait_streaming(client, conversation)

        served.kill(served.child("worker"), signal.SIGTERM)  # a deploy, a Ctrl-C

        run = wait_until_finished(client, run_id, 20)  # no 30 s wait for a heartbeat
        assert run["reason"] == "interrupted"
        kept = answers(client, conversation)[-1]["content"]
        assert SENT.startswith(kept.split("\n\n", 1)[1])
        messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
        assert "was stopped" in messages[-1]["content"] and "Resume" in messages[-1]["content"]
        served.wait_healthy(60)
        assert client.post(f"/api/runs/{run_id}/continue/").status_code == 202
        assert wait_until_finished(client, run_id, 60)["reason"] == "completed"
        assert answers(client, conversation)[-1]["content"] == "All done."
    finally:
        served.stop()
