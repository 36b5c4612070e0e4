"""Oracle as several machines run it (README "How it scales"): two daphnes and two
Celery workers sharing one database and one Redis. A page on either daphne shows the
same live run; a run whose worker is killed finishes on the other; a hundred runs
spread over both workers, each run once.

Which worker ran a round of a run is in the workers' logs ("run <id>: claimed to
<action> (lease <n>)"; `runs.host`), and how it ended in their limit log lines."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.browser.conftest import launched_chromium, log_in
from tests.e2e.test_faults import CHUNKS, DONE, SENT, answers, completed, wait_streaming
from tests.e2e.test_runs_api import start_conversation
from tests.redis_dbs import SCALE_OUT_REDIS_DB
from tests.stack import OracleStack

pytestmark = pytest.mark.timeout(240)  # the first test starts the four processes

CLAIMED = re.compile(r"run ([0-9a-f-]{36}): claimed to (\w+) \(lease (\d+)\)")
PERSON = "ada"
RUNS = 100
SOCKET_OPEN = "document.addEventListener('htmx:wsOpen', () => { window.socketOpen = true; });"


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeServer]:
    """A fake provider of this module's own: no run left going by another test of the
    session can take the answers scripted here, nor add to the requests counted."""
    with FakeServer([]) as server:
        yield server


@pytest.fixture(scope="module")
def two_by_two(
    tmp_path_factory: pytest.TempPathFactory, provider: FakeServer
) -> Iterator[OracleStack]:
    """Two daphnes and two workers on one database and one Redis (a Redis database of
    their own: the session's stack may be running beside them)."""
    oracle = OracleStack(
        tmp_path_factory.mktemp("scale-out"),
        redis_db=SCALE_OUT_REDIS_DB,
        ORACLE_RUN_HEARTBEAT_TIMEOUT="3",
        **processes.model_env(provider),
    )
    oracle.start(daphnes=2, workers=2)
    try:
        yield oracle
    finally:
        oracle.stop()


@pytest.fixture(scope="module")
def token(two_by_two: OracleStack) -> str:
    return two_by_two.create_user(PERSON)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with launched_chromium() as browser:
        yield browser


def claims(stack: OracleStack) -> dict[str, list[tuple[str, str, int]]]:
    """Each run's claims, in order: (worker, action, lease), from the workers' logs."""
    found: dict[str, list[tuple[str, str, int]]] = {}
    for worker in stack.workers:
        for run_id, action, lease in CLAIMED.findall(stack.worker_log(worker).read_text()):
            found.setdefault(run_id, []).append((worker, action, int(lease)))
    return {run_id: sorted(rounds, key=lambda claim: claim[2]) for run_id, rounds in found.items()}


def endings(stack: OracleStack) -> dict[str, list[tuple[str, str]]]:
    """Each run's endings, (worker, reason), from the limit log lines on the workers'
    output (`ops.limit_log`: one JSON line for every `run.finished`)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for worker in stack.workers:
        for line in stack.worker_log(worker).read_text().splitlines():
            if line.startswith("{") and '"run.finished"' in line:
                logged = json.loads(line)
                found.setdefault(logged["run_id"], []).append((worker, logged["reason"]))
    return found


def final_text(page: Any) -> str:
    return " ".join(page.locator(".msg-assistant .msg-body").last.inner_text().split())


def test_a_page_on_either_daphne_shows_the_same_live_run(
    two_by_two: OracleStack, token: str, chromium: Any, provider: FakeServer
) -> None:
    url_a, url_b = two_by_two.urls
    client = two_by_two.client(token)
    conversation = client.post("/api/conversations/", json={}).json()["id"]
    pages = []
    for url in (url_a, url_b):  # two machines' browsers, each on its own daphne
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(30_000)
        context.add_init_script(SOCKET_OPEN)
        page = context.new_page()
        log_in(page, url, PERSON)
        page.goto(f"{url}/c/{conversation}/")
        page.wait_for_function("() => window.socketOpen")  # a function: no eval under the CSP
        pages.append(page)
    on_a, on_b = pages
    provider.set_script([{"text": CHUNKS, "chunk_delay": 0.07}])  # eight seconds

    on_a.fill("#composer-input", "Count for me")
    on_a.press("#composer-input", "Enter")  # posted to daphne A

    for page in pages:
        page.wait_for_selector(".msg-assistant >> text=w30", timeout=30_000)
    live = [final_text(page) for page in pages]
    (run,) = client.get(f"/api/conversations/{conversation}/").json()["runs"]
    assert run["status"] == "running"  # seen live, not on a reload after the end
    for text in live:
        assert SENT.startswith(text + " ") and "w119" not in text

    for page in pages:
        page.wait_for_selector("#gauges[data-status=finished]", timeout=60_000)
    assert final_text(on_a) == final_text(on_b) == SENT.strip()
    assert answers(client, conversation)[-1]["content"] == SENT
    for page in pages:
        page.context.close()


def test_a_hundred_runs_spread_over_both_workers_each_run_once(
    two_by_two: OracleStack, token: str, provider: FakeServer
) -> None:
    clients = [two_by_two.client(token, url) for url in two_by_two.urls]
    provider.set_script([{"text": ["Short ", "answer."]}], repeat_last=True)
    earlier = len(provider.requests)
    started = time.monotonic()

    def post(number: int) -> tuple[str, str]:  # half to each daphne
        return start_conversation(clients[number % 2], f"Question {number}")

    def stored(conversation: str) -> list[tuple[str, str]]:
        detail = clients[1].get(f"/api/conversations/{conversation}/").json()
        runs = [(run["status"], run["reason"]) for run in detail["runs"]]
        return [*runs, *((m["role"], m["content"]) for m in detail["messages"])]

    def all_finished() -> list[list[tuple[str, str]]] | None:
        with ThreadPoolExecutor(8) as pool:
            saved = list(pool.map(stored, (conversation for conversation, _ in posted)))
        return saved if all(each[0][0] == "finished" for each in saved) else None

    with ThreadPoolExecutor(8) as pool:
        posted = list(pool.map(post, range(RUNS)))
    run_ids = {run_id for _, run_id in posted}
    # Each ending is logged as it happens, and saved within a tick (`runs.recorder`).
    processes.wait_for(lambda: run_ids <= set(endings(two_by_two)), 120, interval=0.5)
    saved = processes.wait_for(all_finished, 30, interval=0.5)
    took = time.monotonic() - started

    assert saved == [
        [("finished", "completed"), ("user", f"Question {number}"), ("assistant", "Short answer.")]
        for number in range(RUNS)
    ]
    claimed = claims(two_by_two)
    assert {run_id: [(action, lease) for _, action, lease in claimed[run_id]]
            for run_id in run_ids} == {run_id: [("start", 1)] for run_id in run_ids}  # fmt: skip
    ended = endings(two_by_two)
    assert all(len(ended[run_id]) == 1 for run_id in run_ids)  # each ended once
    asked = Counter(request["messages"][-1]["content"]
                    for request in provider.requests[earlier:])  # fmt: skip
    assert asked == Counter(f"Question {number}" for number in range(RUNS))  # each asked once
    split = Counter(claimed[run_id][0][0] for run_id in run_ids)
    assert len(split) == 2, split  # both workers ran some
    print(f"{RUNS} runs in {took:.1f} s, by worker: {dict(split)}")


def test_a_run_whose_worker_is_killed_finishes_on_the_other(
    two_by_two: OracleStack, token: str, provider: FakeServer
) -> None:
    """Last: it leaves one worker."""
    client = two_by_two.client(token, two_by_two.urls[1])
    provider.set_script([{"text": CHUNKS, "chunk_delay": 0.05}, DONE])
    earlier = len(provider.requests)
    conversation, run_id = start_conversation(client, "Talk for a while")
    wait_streaming(client, conversation, words=20)
    ((first, action, lease),) = claims(two_by_two)[run_id]
    assert (action, lease) == ("start", 1)
    (other,) = set(two_by_two.workers) - {first}
    stored = answers(client, conversation)[-1]["content"]

    killed = time.monotonic()
    two_by_two.kill_worker(first)  # SIGKILL: the machine is gone
    processes.wait_for(lambda: len(claims(two_by_two)[run_id]) == 2, 60, interval=0.2)
    resumed = time.monotonic() - killed
    completed(client, run_id)
    finished = time.monotonic() - killed

    assert claims(two_by_two)[run_id] == [(first, "start", 1), (other, "resume", 2)]
    # Marked lost by the other worker's sweeper or by a daphne (asked about the run).
    assert [e for e in endings(two_by_two)[run_id] if e[1] != "interrupted"] == [
        (other, "completed")
    ]
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    kept = next(m["content"] for m in messages if m["termination_reason"] == "interrupted")
    streamed = kept.split("\n\n", 1)[1]  # after the explanation
    assert streamed.startswith(stored.rstrip()) and SENT.startswith(streamed)  # none lost, doubled
    assert [a["content"] for a in answers(client, conversation)] == [kept, "All done."]
    assert len(provider.requests) - earlier == 2  # the stream, then the resumed call
    print(f"killed worker's run resumed after {resumed:.1f} s, finished after {finished:.1f} s")
