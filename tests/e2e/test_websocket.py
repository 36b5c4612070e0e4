"""The conversation WebSocket against real daphne, a real worker and Redis: live
fragments in order, an exact replay after a reconnect, and its guards."""

from __future__ import annotations

import contextlib
import html
import json
import re
import time

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from agents.testing.fake_server import FakeServer
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.stack import OracleStack

SEQ = re.compile(r'id="stream-state" hx-swap-oob="outerHTML" data-run="[^"]*" data-seq="(\d+)"')
# An answer's text as it streams: the growing block of a new answer, then the words
# added to it (chat.streaming); plain words never make the block render again.
STREAMED = re.compile(
    r'id="run-[\w-]+-a\d+-tail">(.*?)</div>'
    r'|hx-swap-oob="beforeend:#run-[\w-]+-a\d+-tail[^"]*">(.*?)</div>',
    re.S,
)
TAG = re.compile(r"<[^>]+>")
CHUNKS = [f"part{i} " for i in range(12)]


def log_in(stack: OracleStack, username: str) -> str:
    """Log in through the login page; return the session cookie."""
    with httpx.Client(base_url=stack.url) as browser:
        browser.get("/login/")
        response = browser.post(
            "/login/",
            data={"username": username, "password": "correct horse battery",
                  "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        )  # fmt: skip
        assert response.status_code == 302, response.text
        return browser.cookies["sessionid"]


def open_socket(stack: OracleStack, conversation: str, session: str | None) -> ClientConnection:
    headers = {"Origin": stack.url}
    if session:
        headers["Cookie"] = f"sessionid={session}"
    url = stack.url.replace("http://", "ws://") + f"/ws/conversations/{conversation}/"
    return connect(url, additional_headers=headers, open_timeout=10)


def read_until(socket: ClientConnection, marker: str, frames: list[str]) -> None:
    while True:
        frame = str(socket.recv(timeout=20))
        frames.append(frame)
        if marker in frame:
            return


def streamed_text(frames: list[str]) -> str:
    """The words streamed, one space after each (as the chunks are sent)."""
    pieces = (html.unescape(TAG.sub("", a or b)) for f in frames for a, b in STREAMED.findall(f))
    return "".join(word + " " for piece in pieces for word in piece.split())


def seqs(frames: list[str]) -> list[int]:
    return [int(s) for f in frames for s in SEQ.findall(f)]


def test_a_run_streams_to_the_socket_in_order(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    token = stack.create_user("nina")
    client = stack.client(token)
    session = log_in(stack, "nina")
    conversation = client.post("/api/conversations/", json={}).json()["id"]
    fake_provider.set_script([{"text": CHUNKS, "chunk_delay": 0.02}])
    frames: list[str] = []

    with open_socket(stack, conversation, session) as socket:
        posted = client.post(f"/api/conversations/{conversation}/messages/", json={"content": "Go"})
        read_until(socket, 'data-status="finished"', frames)

    run = wait_until_finished(client, posted.json()["run_id"])
    received = seqs(frames)
    assert received == sorted(set(received))  # increasing, never repeated
    assert received[-1] == len(list(_events(client, run["id"])))
    assert streamed_text(frames) == "".join(CHUNKS)
    assert (
        "Stop" not in frames[-1]
        or 'id="run-controls" class="run-controls" hx-swap-oob="true"></div>' in frames[-1]
    )


def _events(client: httpx.Client, run_id: str) -> list[str]:
    with client.stream("GET", f"/api/runs/{run_id}/events/") as response:
        return [line for line in response.iter_lines() if line.startswith("id: ")]


@pytest.mark.parametrize(
    ("username", "sync_after"),
    [("omar", 0.0), ("opal", 0.4)],  # 0.4 s: chunks are pushed before the sync is read
)
def test_a_reconnect_mid_stream_replays_without_gap_or_duplicate(
    stack: OracleStack, fake_provider: FakeServer, username: str, sync_after: float
) -> None:
    token = stack.create_user(username)
    client = stack.client(token)
    session = log_in(stack, username)
    fake_provider.set_script([{"text": CHUNKS, "chunk_delay": 0.12}])
    conversation, run_id = start_conversation(client, "Go slowly")
    first: list[str] = []

    with open_socket(stack, conversation, session) as socket:
        socket.send(json.dumps({"type": "sync", "run_id": run_id, "last_seq": 0}))
        read_until(socket, "part2", first)
    last_seq = seqs(first)[-1]
    second: list[str] = []
    with open_socket(stack, conversation, session) as socket:  # the "refresh"
        time.sleep(sync_after)
        socket.send(json.dumps({"type": "sync", "run_id": run_id, "last_seq": last_seq}))
        read_until(socket, 'data-status="finished"', second)

    # The first frame may only say where the page is (its gauges, at last_seq): no
    # event it already has comes again, and none is missing.
    assert min(seqs(second)) >= last_seq and max(seqs(second)) > last_seq
    assert streamed_text(first) + streamed_text(second) == "".join(CHUNKS)
    wait_until_finished(client, run_id)


def test_another_users_conversation_is_refused(stack: OracleStack) -> None:
    owner = stack.client(stack.create_user("pete"))
    stack.create_user("quinn")
    conversation = owner.post("/api/conversations/", json={}).json()["id"]
    intruder = log_in(stack, "quinn")

    for session in (intruder, None):
        with pytest.raises(InvalidStatus) as refused:
            open_socket(stack, conversation, session)
        assert refused.value.response.status_code == 403


def test_a_page_of_another_origin_cannot_open_the_socket(stack: OracleStack) -> None:
    """Another site in the browser (another port of the same host is another origin)
    must not open a socket with the user's cookie."""
    client = stack.client(stack.create_user("origin-olive"))
    conversation = client.post("/api/conversations/", json={}).json()["id"]
    session = log_in(stack, "origin-olive")
    url = stack.url.replace("http://", "ws://") + f"/ws/conversations/{conversation}/"
    host, port = stack.url.removeprefix("http://").rsplit(":", 1)
    others = [f"http://{host}:{int(port) + 1}", f"https://{host}:{port}", "http://evil.example"]

    for origin in others:
        with pytest.raises(InvalidStatus) as refused:
            connect(url, additional_headers={"Origin": origin, "Cookie": f"sessionid={session}"},
                    open_timeout=10)  # fmt: skip
        assert refused.value.response.status_code == 403, origin
    with open_socket(stack, conversation, session):
        pass  # its own origin is welcome


def test_bad_frames_get_an_error_frame_and_the_socket_stays_open(stack: OracleStack) -> None:
    client = stack.client(stack.create_user("rosa"))
    conversation = client.post("/api/conversations/", json={}).json()["id"]
    session = log_in(stack, "rosa")

    with open_socket(stack, conversation, session) as socket:
        answers = []
        for frame in (
            "not json",
            "x" * 5000,
            json.dumps([1, 2]),
            json.dumps({"type": "sync", "run_id": "nope", "last_seq": 0}),
            json.dumps({"type": "sync", "run_id": conversation, "last_seq": -1}),
            "[" * 2000 + "]" * 2000,  # nested past Python's recursion limit
        ):
            socket.send(frame)
            answers.append(json.loads(socket.recv(timeout=10)))

    assert [a["type"] for a in answers] == ["error"] * 6
    assert answers[5]["error"] == "Frames must be JSON."
    assert answers[0]["error"] == "Frames must be JSON."
    assert answers[1]["error"] == "Frame too large."
    assert answers[3]["error"] == "No such run in this conversation."


def test_a_lost_worker_is_noticed_by_another_worker_and_shown_live(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    token = stack.create_user("tara")
    client = stack.client(token)
    session = log_in(stack, "tara")
    fake_provider.set_script([{"text": ["Working ", "on ", "it"], "hang": True}])
    conversation, run_id = start_conversation(client, "Go")
    frames: list[str] = []

    with open_socket(stack, conversation, session) as socket:
        socket.send(json.dumps({"type": "sync", "run_id": run_id, "last_seq": 0}))
        while "Working on it" not in streamed_text(frames):
            frames.append(str(socket.recv(timeout=20)))
        stack.kill_worker()
        stack.start_worker()  # no page or API call looks at the run: the new worker does
        read_until(socket, 'data-status="finished"', frames)

    assert "badge-interrupted" in frames[-1] or any("badge-interrupted" in f for f in frames)
    assert any(">Resume</button>" in f for f in frames)
    assert "Working on it" in streamed_text(frames)


def test_a_flood_of_frames_is_cut_short(stack: OracleStack) -> None:
    client = stack.client(stack.create_user("flood-fay"))
    conversation = client.post("/api/conversations/", json={}).json()["id"]
    session = log_in(stack, "flood-fay")

    answers: list[dict[str, str]] = []
    with open_socket(stack, conversation, session) as socket:
        for _ in range(2_000):
            socket.send("not json")
        with contextlib.suppress(TimeoutError):
            while True:
                answers.append(json.loads(socket.recv(timeout=3)))

    # The first 30 in ten seconds are answered; then one warning, and the rest dropped.
    assert [a["error"] for a in answers] == ["Frames must be JSON."] * 30 + [
        "Too many frames: slow down."
    ]


def test_a_sync_read_after_the_run_was_pushed_repeats_nothing(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    """A page that had nothing of the run yet opens the socket and says so, but under
    load the server reads its sync only after the run's events were pushed to it (past
    the socket's first second): what the socket sent already is not sent again."""
    token = stack.create_user("sage")
    client = stack.client(token)
    session = log_in(stack, "sage")
    fake_provider.set_script([{"text": CHUNKS, "chunk_delay": 0.12}])
    conversation, run_id = start_conversation(client, "Go slowly")
    frames: list[str] = []

    with open_socket(stack, conversation, session) as socket:
        read_until(socket, "part", frames)  # pushed: the page's sync is not read yet
        socket.send(json.dumps({"type": "sync", "run_id": run_id, "last_seq": 0}))
        read_until(socket, 'data-status="finished"', frames)

    received = [s for s in seqs(frames)]
    shown = streamed_text(frames)
    assert shown == "".join(CHUNKS), shown
    assert sorted(received) == received
    wait_until_finished(client, run_id)
