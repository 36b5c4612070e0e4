"""N conversations streaming at once from the fake model through the whole product.

The fake OpenAI-compatible provider (`agents/testing/fake_server.py`, in a process of
its own) answers every call with the same stream of `--tokens` words, one every
`--interval` seconds, each word stamped with the moment it was sent (`stamp`). Oracle
runs as a user starts it (`manage.py serve`: daphne and one Celery worker) on SQLite or
a fresh PostgreSQL database, with the embedded or the system Redis. N clients then
start at once, half reading the conversation's WebSocket (HTML fragments, as the
browser gets them), half the run's Server-Sent Events (the API); each creates a
conversation, posts one message and reads its run to the end, reconnecting from the
last event it has when its connection drops, as the browser and EventSource do. A
WebSocket client connects once it has the run's id and asks for it from the start
(`sync`, `last_seq` 0), as a page opened on a running conversation.

Every word is checked as it arrives. *Delivery latency* is the client's receive time
minus the word's stamp (one clock: everything runs on this machine, over loopback);
*first-token latency* is the first word's arrival minus the moment the message was
posted (queueing for a worker included). The answer as the client would show it (the
text its fragments or events build) must hold every word once and in order, and so
must the assistant message saved (read back through the API). Peak memory of daphne
and the worker is their VmHWM (and VmRSS sampled every 0.5 s) from /proc. *Server CPU
a word* is the CPU time daphne and the worker used from the first post to the last
stream's end, over the words delivered; the benchmark's own checks (each run's end
and its saved answer, read through the API) come after that window.

    python bench/load.py --n 50 --clients mixed --database postgres --redis system

With `--mcp-calls K` each run first calls an MCP tool K times (`testing__echo` of
`tests/mcp/testing_server.py`, started over stdio by the worker, shared by every run),
then streams its answer; every call must come back once, answered, in every run.

Prints a Markdown table (`--json FILE` writes every figure); exits 1 when a run did
not complete or a word was lost, repeated or out of order, 2 when the stack would not
start or serve exited during the load. `--timeout` bounds the clients' phase; starting
and stopping have bounds of their own, and serve and the fake provider are stopped
whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import re
import resource
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's code, whatever is installed

from ops.lifecycle import die_with_parent  # noqa: E402

PASSWORD = "load correct horse battery"
USERS = 4  # clients share a few users: each login costs a password hash on the server
POSTGRES = "postgres://postgres@127.0.0.1:5432"
ADMIN_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
SYSTEM_REDIS = "redis://127.0.0.1:6379/9"
START_SECONDS = 120  # bound of each start-up step
LAG_TICK_S = 0.01  # how often the clients' event loop is checked for lateness
STOP_SECONDS = 20  # SIGINT, then SIGKILL
CHECKS_AT_ONCE = 20  # clients reading their saved runs back at the same time

WORD = re.compile(r"\bw(\d+)t(\d+)\b")
# What the page does with a fragment: an answer's text swapped whole (`-text`, at its
# end), its growing block drawn again (`-tail`), a finished block put before that
# block, or a new element holding an answer's text (its finished blocks, then its
# growing block). See `chat.streaming`.
FRAGMENT = re.compile(
    r'hx-swap-oob="(?P<swap>\w+):#(?P<target>[\w-]+?)-(?P<part>text|tail)[^"]*"[^>]*>'
    r"(?P<into>.*?)</div>"
    r'|\bid="(?P<element>[\w-]+)-text"[^>]*>(?P<body>.*?)'
    r'(?:<div class="md-tail" id="[\w-]+-tail">(?P<tail>.*?)</div>)?</div>',
    re.S,
)
SEQ = re.compile(r'data-seq="(\d+)"')
ANNOUNCED = re.compile(r'<div hx-swap-oob="innerHTML:#announcer">.*?</div>', re.S)
STATUS = re.compile(r'data-status="(\w+)"')
LOG_PROBLEM = re.compile(r"\b(ERROR|CRITICAL|WARNING|raised unexpected|\w*(Error|Exception))\b")


def now_us() -> int:
    return time.time_ns() // 1000


# --- what a client sees -------------------------------------------------------------


@dataclass
class Answer:
    """The answer as the client would show it: text elements in page order, by id."""

    parts: list[tuple[str, list[int]]] = field(default_factory=list)
    shown: Counter[int] = field(default_factory=Counter)
    repeated: set[int] = field(default_factory=set)

    def add(self, key: str, words: list[int]) -> None:
        self.parts.append((key, list(words)))
        self._count(words)

    def append(self, key: str, words: list[int]) -> None:
        for number, (name, existing) in enumerate(self.parts):
            if name == key:
                self.parts[number] = (name, existing + words)
                self._count(words)
                return
        self.add(key, words)

    def replace(self, key: str, words: list[int]) -> None:
        for number, (name, _) in enumerate(self.parts):
            if name == key:
                self.parts[number] = (name, list(words))
                self.shown = Counter(self.words())
                self.repeated.update(w for w, n in self.shown.items() if n > 1)
                return
        self.add(key, words)

    def words(self) -> list[int]:
        return [word for _, words in self.parts for word in words]

    def _count(self, words: list[int]) -> None:
        for word in words:
            self.shown[word] += 1
            if self.shown[word] > 1:
                self.repeated.add(word)


@dataclass
class Conversation:
    """One client: its conversation, its run and every word it received."""

    number: int
    transport: str  # "ws" or "sse"
    tokens: int
    conversation_id: str = ""
    run_id: str = ""
    posted_us: int = 0
    answered_us: int = 0  # when the post was answered (the run queued)
    first_stamp_us: int = 0  # when the provider sent the first word
    arrived: dict[int, int] = field(default_factory=dict)  # word -> first receive, µs
    latencies_ms: list[float] = field(default_factory=list)
    highest: int = -1
    reordered: int = 0
    unparsed: int = 0  # words in frames of no known shape (still counted as arrived)
    answer: Answer = field(default_factory=Answer)
    reconnects: int = 0
    status: str = ""
    reason: str = ""
    stored: list[int] | None = None
    tool_results: list[str] | None = None  # the saved MCP results (--mcp-calls)
    errors: list[str] = field(default_factory=list)  # the first few
    error_count: int = 0
    received_bytes: int = 0  # of the frames or events, as they came over the wire

    def note(self, error: str) -> None:
        self.error_count += 1
        if len(self.errors) < 10:
            self.errors.append(error)

    def receive(self, words: list[tuple[int, int]], at: int) -> None:
        for word, stamp in words:
            if word in self.arrived:
                continue
            self.arrived[word] = at
            if word == 0:
                self.first_stamp_us = stamp
            self.latencies_ms.append((at - stamp) / 1000)
            if word < self.highest:
                self.reordered += 1
            self.highest = max(self.highest, word)

    @property
    def completed(self) -> bool:
        return self.status == "finished" and self.reason == "completed"

    @property
    def first_token_ms(self) -> float | None:
        if not self.arrived or not self.posted_us:
            return None
        return (min(self.arrived.values()) - self.posted_us) / 1000

    def summary(self) -> dict[str, Any]:
        expected = list(range(self.tokens))
        return {
            "transport": self.transport,
            "conversation": self.conversation_id,
            "run": self.run_id,
            "status": self.status,
            "reason": self.reason,
            "delivered": len(self.arrived),
            "lost": self.tokens - len(self.arrived),
            "duplicates": len(self.answer.repeated),
            "reordered": self.reordered,
            "shown_ok": self.answer.words() == expected,
            "repeated_words": sorted(self.answer.repeated)[:20],
            "shown_parts": [(key, len(words)) for key, words in self.answer.parts],
            "stored_ok": self.stored == expected,
            "tool_results": self.tool_results,
            "unparsed_words": self.unparsed,
            "reconnects": self.reconnects,
            "first_token_ms": self.first_token_ms,
            "delivery_ms": percentiles(self.latencies_ms),
            "error_count": self.error_count,
            "errors": self.errors,
        }


def words_in(text: str) -> list[tuple[int, int]]:
    return [(int(word), int(stamp)) for word, stamp in WORD.findall(text)]


def take_frame(client: Conversation, frame: str, at: int) -> None:
    """Apply one WebSocket frame of out-of-band fragments to the client's answer."""
    placed = 0
    for match in FRAGMENT.finditer(frame):
        if match["swap"]:
            key, words = match["target"], words_in(match["into"])
            indices = [w for w, _ in words]
            if match["part"] == "text" and match["swap"] == "beforeend":  # before 2026-11-23
                client.answer.append(key, indices)
            elif match["part"] == "text":  # the answer whole, at its end
                client.answer.replace(key + "-tail", [])
                client.answer.replace(key, indices)
            elif match["swap"] == "beforebegin":  # a block finished: it left the tail
                client.answer.replace(key + "-tail", [])
                client.answer.append(key, indices)
            elif match["swap"] == "beforeend":  # plain words added to the growing block
                client.answer.append(key + "-tail", indices)
            else:
                client.answer.replace(key + "-tail", indices)
        else:
            key = match["element"]
            settled, tail = words_in(match["body"]), words_in(match["tail"] or "")
            client.answer.add(key, [w for w, _ in settled])
            client.answer.add(key + "-tail", [w for w, _ in tail])
            words = settled + tail
        placed += len(words)
    everything = words_in(ANNOUNCED.sub("", frame))  # read out again: not new words
    client.unparsed += max(0, len(everything) - placed)
    client.receive(everything, at)


# --- clients ----------------------------------------------------------------------------


@dataclass
class Target:
    """Where the clients go and who they are."""

    url: str
    tokens: list[str]
    sessions: list[str]
    deadline: float  # event-loop time


async def start_run(http: httpx.AsyncClient, client: Conversation, token: str) -> None:
    auth = {"Authorization": f"Bearer {token}"}
    created = await http.post("/api/conversations/", json={}, headers=auth)
    created.raise_for_status()
    client.conversation_id = created.json()["id"]
    client.posted_us = now_us()
    posted = await http.post(
        f"/api/conversations/{client.conversation_id}/messages/",
        json={"content": f"Load test {client.number}: stream the stamped words."},
        headers=auth,
    )
    posted.raise_for_status()
    client.answered_us = now_us()
    client.run_id = posted.json()["run_id"]


async def read_socket(client: Conversation, target: Target, session: str) -> None:
    """Follow the run on the conversation's WebSocket, as the page does."""
    url = target.url.replace("http://", "ws://") + f"/ws/conversations/{client.conversation_id}/"
    headers = {"Origin": target.url, "Cookie": f"sessionid={session}"}
    last_seq = 0
    while True:
        try:
            async with connect(
                url, additional_headers=headers, proxy=None, ping_interval=None,
                max_queue=None, max_size=None, open_timeout=60,
            ) as websocket:  # fmt: skip
                sync = {"type": "sync", "run_id": client.run_id, "last_seq": last_seq}
                await websocket.send(json.dumps(sync))
                async for frame in websocket:
                    at = now_us()
                    text = frame if isinstance(frame, str) else frame.decode()
                    client.received_bytes += len(text.encode())
                    if text.startswith("{"):
                        client.note(f"socket: {text[:200]}")
                        continue
                    take_frame(client, text, at)
                    last_seq = max([last_seq, *(int(s) for s in SEQ.findall(text))])
                    if {"finished", "paused"} & set(STATUS.findall(text)):
                        return
                client.note(f"socket: closed by the server ({websocket.close_code})")
        except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError) as problem:
            client.note(f"socket: {type(problem).__name__}: {problem}"[:300])
        client.reconnects += 1
        await asyncio.sleep(0.5)


async def read_events(http: httpx.AsyncClient, client: Conversation, token: str) -> None:
    """Follow the run's Server-Sent Events, resuming after the last one, as EventSource."""
    last_id = 0
    while True:
        headers = {"Authorization": f"Bearer {token}", "Last-Event-ID": str(last_id)}
        try:
            async with http.stream(
                "GET", f"/api/runs/{client.run_id}/events/", headers=headers
            ) as response:
                response.raise_for_status()
                block: dict[str, str] = {}
                async for line in response.aiter_lines():
                    client.received_bytes += len(line.encode()) + 1
                    if line:
                        key, _, value = line.partition(": ")
                        block[key] = value
                        continue
                    if "data" not in block:
                        block = {}
                        continue
                    event = json.loads(block["data"])
                    last_id = int(block.get("id", last_id))
                    block = {}
                    if take_event(client, event, now_us()):
                        return
            return  # the server ends the stream only once the run has ended or paused
        except httpx.HTTPError as problem:
            client.note(f"events: {type(problem).__name__}: {problem}"[:300])
        client.reconnects += 1
        await asyncio.sleep(0.5)


def take_event(client: Conversation, event: dict[str, Any], at: int) -> bool:
    """Apply one run event to the client's answer; True once the stream is over."""
    kind = event.get("type")
    if kind == "assistant.delta":
        words = words_in(str(event.get("text", "")))
        client.answer.append("answer", [w for w, _ in words])
        client.receive(words, at)
    elif kind == "assistant.message":
        words = words_in(str(event.get("text") or ""))
        client.answer.replace("answer", [w for w, _ in words])
        client.receive(words, at)
    elif kind in ("run.finished", "run.paused"):
        client.status = "finished" if kind == "run.finished" else "paused"
        return True
    return False


async def read_json(http: httpx.AsyncClient, path: str, token: str) -> dict[str, Any]:
    """GET `path`, again every second while the server answers with an error."""
    while True:
        response = await http.get(path, headers={"Authorization": f"Bearer {token}"})
        if response.status_code == 200:
            return dict(response.json())
        await asyncio.sleep(1)


async def wait_for_end(http: httpx.AsyncClient, client: Conversation, token: str) -> None:
    while True:
        run = await read_json(http, f"/api/runs/{client.run_id}/", token)
        if run["status"] in ("finished", "paused"):
            return
        await asyncio.sleep(0.5)


async def read_saved(http: httpx.AsyncClient, client: Conversation, token: str) -> None:
    """The run's status as saved (queued or running, for one that did not end in time),
    and the answer as saved."""
    run = await read_json(http, f"/api/runs/{client.run_id}/", token)
    client.status, client.reason = run["status"], run.get("reason") or ""
    conversation = await read_json(http, f"/api/conversations/{client.conversation_id}/", token)
    answers = [m for m in conversation["messages"] if m["role"] == "assistant"]
    client.stored = [w for w, _ in words_in(answers[-1]["content"])] if answers else []
    client.tool_results = [
        m["content"] if m["metadata"].get("ok") else f"failed: {m['content']}"
        for m in conversation["messages"]
        if m["role"] == "tool"
    ]


async def drive(client: Conversation, http: httpx.AsyncClient, target: Target) -> None:
    """Post the message and read its run to the end, as a person's browser or an API
    client does (what the server's CPU a word is measured over)."""
    user = client.number % len(target.tokens)
    token = target.tokens[user]
    try:
        async with asyncio.timeout_at(target.deadline):
            await start_run(http, client, token)
            if client.transport == "ws":
                await read_socket(client, target, target.sessions[user])
            else:
                await read_events(http, client, token)
    except TimeoutError:
        client.note("timed out")
    except Exception as problem:  # one client's failure is a figure, not the end
        client.note(f"{type(problem).__name__}: {problem}"[:300])


async def check(client: Conversation, http: httpx.AsyncClient, token: str) -> None:
    """The benchmark's own reads, once every stream is over (outside the measured
    CPU): the run's end and the answer as saved."""
    if not client.run_id:
        return
    try:
        async with asyncio.timeout(30):
            await wait_for_end(http, client, token)
    except Exception as problem:
        client.note(f"waiting for the run's end: {type(problem).__name__}: {problem}"[:300])
    try:
        async with asyncio.timeout(30):
            await read_saved(http, client, token)
    except Exception as problem:
        client.note(f"reading the saved run: {type(problem).__name__}: {problem}")


async def log_in(url: str, username: str) -> str:
    """Log in through the login page, as a browser does; the session cookie."""
    async with httpx.AsyncClient(base_url=url, trust_env=False, timeout=60) as browser:
        await browser.get("/login/")
        form = {
            "username": username,
            "password": PASSWORD,
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        }
        response = await browser.post("/login/", data=form)
        if response.status_code != 302:
            raise RuntimeError(f"log-in of {username} answered {response.status_code}")
        return str(browser.cookies["sessionid"])


async def log_in_all(url: str, count: int) -> list[str]:
    return list(await asyncio.gather(*(log_in(url, f"load{u}") for u in range(count))))


async def run_clients(
    stack: Stack,
    sessions: list[str],
    clients: list[Conversation],
    limit_s: float,
    ramp: float,
    lags: list[float],
    *,
    watch_serve: bool = True,
) -> float:
    """All clients at once (or their starts spread over `ramp` seconds); the wall time
    from the first post to the last client done.

    Stops them all if serve exits meanwhile (its figures would mean nothing); a client
    process (`--client-processes`) leaves that to its parent."""
    assert stack.serve is not None
    loop = asyncio.get_running_loop()

    everyone_count = max((c.number for c in clients), default=0) + 1  # of every process

    async def later(client: Conversation, work: Any) -> None:
        await asyncio.sleep(ramp * client.number / everyone_count)
        await work

    target = Target(stack.url, stack.tokens, sessions, loop.time() + limit_s)
    watch = asyncio.create_task(watch_lag(lags))
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    http_timeout = httpx.Timeout(60.0, connect=30.0)
    async with httpx.AsyncClient(
        base_url=stack.url, trust_env=False, limits=limits, timeout=http_timeout
    ) as http:
        started = time.monotonic()
        everyone = asyncio.gather(*(later(c, drive(c, http, target)) for c in clients))
        while not everyone.done():
            await asyncio.wait({everyone}, timeout=1)
            if not everyone.done() and watch_serve and stack.serve.poll() is not None:
                everyone.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await everyone
        watch.cancel()
        return time.monotonic() - started


def clients_in_processes(
    stack: Stack, sessions: list[str], clients: list[Conversation], args: argparse.Namespace
) -> tuple[float, list[Conversation], list[float], float]:
    """The clients split over `--client-processes` forked processes, each with its own
    event loop, as people's browsers are: one loop reading 200 streams falls behind
    them, and its lateness would count as the server's. Returns the wall time, the
    clients as their processes left them, every process's loop lateness and their CPU
    seconds."""
    assert stack.serve is not None
    context = multiprocessing.get_context("fork")
    parts = [clients[k :: args.client_processes] for k in range(args.client_processes)]
    pipes, processes = [], []
    for part in parts:
        mine, theirs = context.Pipe(duplex=False)
        process = context.Process(
            target=clients_part, args=(stack, sessions, part, args, theirs), daemon=True
        )
        process.start()
        theirs.close()
        pipes.append(mine)
        processes.append(process)
    results: dict[int, Any] = {}
    deadline = time.monotonic() + args.timeout + 60
    while len(results) < len(processes) and time.monotonic() < deadline:
        if stack.serve.poll() is not None:
            break
        for k, pipe in enumerate(pipes):
            if k not in results and pipe.poll(0.2):
                try:
                    results[k] = pipe.recv()
                except EOFError:  # it died without a word: its clients count as lost
                    results[k] = None
    for process in processes:
        if process.is_alive() and len(results) < len(processes):
            process.kill()
        process.join(timeout=10)
    results = {k: result for k, result in results.items() if result is not None}
    done = {c.number: c for result in results.values() for c in result[1]}
    every = [done.get(c.number, c) for c in clients]
    lags = [lag for result in results.values() for lag in result[2]]
    wall = max((result[0] for result in results.values()), default=0.0)
    return wall, every, lags, sum(result[3] for result in results.values())


def clients_part(
    stack: Stack, sessions: list[str], part: list[Conversation], args: argparse.Namespace,
    pipe: Any,
) -> None:  # fmt: skip
    """One client process: its clients' runs, then what they saw, through `pipe`."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    lags: list[float] = []
    wall = asyncio.run(
        run_clients(stack, sessions, part, args.timeout, args.ramp, lags, watch_serve=False)
    )
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    pipe.send((wall, part, lags, cpu))
    pipe.close()


async def watch_lag(lags: list[float]) -> None:
    """How late this process's event loop wakes up, every LAG_TICK_S: a word read late
    by a busy client is counted late, so a delivery figure is only the server's while
    this lag stays far below it."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + LAG_TICK_S
        await asyncio.sleep(LAG_TICK_S)
        lags.append(max(0.0, loop.time() - due))


async def check_clients(stack: Stack, clients: list[Conversation]) -> None:
    """Every client's check, CHECKS_AT_ONCE at a time: 500 at once waited on each other
    past their own timeouts."""
    room = asyncio.Semaphore(CHECKS_AT_ONCE)

    async def checked(client: Conversation, http: httpx.AsyncClient) -> None:
        async with room:
            await check(client, http, stack.tokens[client.number % len(stack.tokens)])

    async with httpx.AsyncClient(base_url=stack.url, trust_env=False, timeout=60) as http:
        await asyncio.gather(*(checked(client, http) for client in clients))


# --- the stack ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_process(process: subprocess.Popen[bytes], first: int = signal.SIGINT) -> None:
    if process.poll() is None:
        process.send_signal(first)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def descendants(root: int) -> dict[int, str]:
    """Live descendants of `root` (from /proc): pid -> command line."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
            commands[int(entry.name)] = cmdline.strip()
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = commands[pid]
                frontier.append(pid)
    return found


def status_kb(pid: int, key: str) -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    with contextlib.suppress(OSError, ValueError, IndexError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return 0.0


class Sampler:
    """Every 0.5 s: peak memory (VmRSS, and VmHWM) and CPU time of named processes, and on
    PostgreSQL the connections open to the stack's database and to the whole server (it is
    shared)."""

    def __init__(self, processes: dict[str, int], database: str | None) -> None:
        self.processes = processes
        self.database = database
        self.peak_kb = dict.fromkeys(processes, 0)
        self.cpu_s = {name: cpu_seconds(pid) for name, pid in processes.items()}
        self.peak_connections = {"ours": 0, "server": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.read()

    def read(self) -> None:
        for name, pid in self.processes.items():
            seen = max(status_kb(pid, "VmRSS"), status_kb(pid, "VmHWM"))
            self.peak_kb[name] = max(self.peak_kb[name], seen)
            self.cpu_s[name] = max(self.cpu_s[name], cpu_seconds(pid))  # 0 once it is gone

    def _sample(self) -> None:
        connection = self._connect()
        try:
            while not self._stop.wait(0.5):
                self.read()
                if connection is not None:
                    self._count_connections(connection)
        finally:
            if connection is not None:
                connection.close()

    def _connect(self) -> Any:
        if self.database is None:
            return None
        import psycopg

        with contextlib.suppress(psycopg.Error):
            return psycopg.connect(ADMIN_DSN, autocommit=True, connect_timeout=5)
        return None

    def _count_connections(self, connection: Any) -> None:
        query = "SELECT count(*) FILTER (WHERE datname = %s), count(*) FROM pg_stat_activity"
        with contextlib.suppress(Exception):
            ours, server = connection.execute(query, (self.database,)).fetchone()
            self.peak_connections["ours"] = max(self.peak_connections["ours"], ours)
            self.peak_connections["server"] = max(self.peak_connections["server"], server)


@dataclass
class Stack:
    """The fake provider and `manage.py serve`, running; stopped by the ExitStack."""

    folder: Path
    env: dict[str, str]
    url: str = ""
    serve: subprocess.Popen[bytes] | None = None
    log_problems: dict[str, Any] = field(default_factory=dict)
    provider: subprocess.Popen[str] | None = None
    provider_url: str = ""
    children: dict[str, int] = field(default_factory=dict)
    tokens: list[str] = field(default_factory=list)
    code_from: str = ""

    @property
    def log(self) -> Path:
        return self.folder / "serve.log"


def prepare_database(kind: str, folder: Path, cleanup: contextlib.ExitStack) -> str:
    if kind == "sqlite":
        return f"sqlite:///{folder / 'oracle.sqlite3'}"
    import psycopg

    name = f"oracle_load_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    cleanup.callback(drop)
    return f"{POSTGRES}/{name}"


def prepare_redis(kind: str) -> str | None:
    if kind == "embedded":
        return None
    import redis

    client = redis.Redis.from_url(SYSTEM_REDIS)
    try:
        client.flushdb()
    finally:
        client.close()
    return SYSTEM_REDIS


def start_provider(stack: Stack, args: argparse.Namespace, cleanup: contextlib.ExitStack) -> None:
    """The fake provider in a process of its own: its sending does not share our GIL."""
    response: dict[str, Any] = {
        "text": ["x"] * args.tokens,
        "chunk_delay": args.interval,
        "stamp": True,
    }
    if args.mcp_calls:
        # A different text each call: the same call three times would be no progress.
        echo = {"name": "testing__echo", "arguments": {"text": MCP_ECHO + "-{round}"}}
        response.update(tool_calls=[echo], tool_rounds=args.mcp_calls)
    script = stack.folder / "script.json"
    script.write_text(json.dumps({"responses": [response], "repeat_last": True}))
    command = [sys.executable, "-m", "agents.testing.fake_server", "--script", str(script)]
    stack.provider = subprocess.Popen(
        command, cwd=ROOT, env=stack.env, stdout=subprocess.PIPE, text=True,
        preexec_fn=die_with_parent,
    )  # fmt: skip
    cleanup.callback(stop_process, stack.provider)
    assert stack.provider.stdout is not None
    ready, _, _ = select.select([stack.provider.stdout], [], [], START_SECONDS)
    line = stack.provider.stdout.readline() if ready else ""
    match = re.search(r"(http://127\.0\.0\.1:\d+/v1)", line)
    if not match:
        raise RuntimeError(f"the fake provider did not start: {line!r}")
    stack.provider_url = match[1]


def start_serve(
    stack: Stack,
    concurrency: int | None,
    cleanup: contextlib.ExitStack,
    web_processes: int = 1,
    workers: int = 1,
) -> None:
    port = free_port()
    stack.url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port),
               "--web-processes", str(web_processes), "--workers", str(workers)]  # fmt: skip
    if concurrency:
        command += ["--concurrency", str(concurrency)]
    log = stack.log.open("wb")
    cleanup.callback(log.close)
    stack.serve = subprocess.Popen(
        command, cwd=ROOT, env=stack.env, stdout=log, stderr=subprocess.STDOUT,
        preexec_fn=die_with_parent,
    )  # fmt: skip
    cleanup.callback(stop_serve, stack)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if stack.serve.poll() is not None:
            raise RuntimeError(f"serve exited with {stack.serve.returncode}; see {stack.log}")
        with contextlib.suppress(httpx.HTTPError, ValueError):
            health = httpx.get(f"{stack.url}/healthz", timeout=5, trust_env=False)
            if health.status_code == 200 and health.json().get("workers", 0) >= workers:
                break
        time.sleep(0.5)
    else:
        raise RuntimeError(f"no healthy stack with a worker within {START_SECONDS} s")
    # "daphne", "daphne-2", ..., "worker", "worker-2", ...: figures add them up per kind.
    for pid, command_line in sorted(descendants(stack.serve.pid).items()):
        if " -m daphne " in command_line:
            kind = "daphne"
        elif " -m celery " in command_line and " worker " in command_line:
            kind = "worker"
        else:
            continue
        count = sum(name.split("-")[0] == kind for name in stack.children)
        stack.children[kind if not count else f"{kind}-{count + 1}"] = pid
    kinds = Counter(name.split("-")[0] for name in stack.children)
    if kinds != Counter(daphne=web_processes, worker=workers):
        raise RuntimeError(f"daphne and the worker not found under serve: {stack.children}")


def stop_serve(stack: Stack) -> None:
    """SIGINT (serve stops its children and the embedded Redis), SIGKILL after 20 s."""
    assert stack.serve is not None
    left = descendants(stack.serve.pid)
    stop_process(stack.serve)
    for pid, command_line in left.items():  # only if serve could not stop them itself
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").strip() == (
                command_line.encode()
            ):
                os.kill(pid, signal.SIGKILL)
    pid_file = stack.folder / "var" / "redis" / "redis.pid"  # the embedded Redis, if left
    with contextlib.suppress(OSError, ValueError):
        pid = int(pid_file.read_text().strip())
        if b"redis" in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.kill(pid, signal.SIGTERM)


def manage(stack: Stack, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=stack.env,
        capture_output=True, text=True, timeout=START_SECONDS, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {args[0]} failed: {result.stderr[-2000:]}")
    return result.stdout.strip()


def create_users(stack: Stack, count: int) -> list[str]:
    """Users load0…, with an API token each; notes where the server's code comes from.
    One `manage.py shell` makes them all (a `create_api_token` each cost 2 s of CPU,
    minutes of the start at 50 clients)."""
    names = [f"load{n}" for n in range(count)]
    code = (
        "import chat; from django.contrib.auth.models import User\n"
        "from accounts.services import api_token_create\n"
        f"for name in {names!r}:\n"
        f"    user = User.objects.create_user(name, password={PASSWORD!r})\n"
        "    print(api_token_create(user=user, name='load')[1])\n"
        "print(chat.__file__)"
    )
    lines = manage(stack, "shell", "--no-imports", "-c", code).splitlines()
    stack.code_from = lines[-1]
    return lines[-1 - count : -1]


def log_problems(log: Path) -> dict[str, Any]:
    """Lines of the serve log that report a problem, counted by their gist."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    gists: Counter[str] = Counter()
    for line in lines:
        if LOG_PROBLEM.search(line):
            gist = re.sub(r"\b[0-9a-f]{8}-[0-9a-f-]{27}\b", "<id>", line)
            gist = re.sub(r"^\[[^\]]*\]\s*|\d{4}-\d\d-\d\d[ T][\d:,.]+\s*", "", gist)
            gist = re.sub(r"\b\d+\b|0x[0-9a-f]+", "N", gist)
            gists[gist.strip()[:240]] += 1
    return {"lines": sum(gists.values()), "top": gists.most_common(15)}


# --- figures -------------------------------------------------------------------------


def percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "max": None}
    ordered = sorted(values)

    def rank(q: float) -> float:
        return round(ordered[max(0, math.ceil(q * len(ordered)) - 1)], 1)

    return {"p50": rank(0.50), "p99": rank(0.99), "max": round(ordered[-1], 1)}


MCP_ECHO = "load"


def totals(clients: list[Conversation], tokens: int, mcp_calls: int = 0) -> dict[str, Any]:
    summaries = [c.summary() for c in clients]
    first = [c.first_token_ms for c in clients if c.first_token_ms is not None]
    started = [c for c in clients if c.answered_us and c.first_stamp_us and 0 in c.arrived]
    results = [r for c in clients for r in c.tool_results or []]
    return {
        "mcp_calls_expected": mcp_calls * len(clients),
        "mcp_calls_answered": sum(r.startswith(MCP_ECHO) for r in results),
        "mcp_runs_wrong": sum(
            (c.tool_results or []) != [f"{MCP_ECHO}-{i}" for i in range(mcp_calls)] for c in clients
        ),
        "clients": len(clients),
        "completed": sum(c.completed for c in clients),
        "sent": tokens * len(clients),
        "delivered": sum(s["delivered"] for s in summaries),
        "lost": sum(s["lost"] for s in summaries),
        "duplicates": sum(s["duplicates"] for s in summaries),
        "reordered": sum(s["reordered"] for s in summaries),
        "shown_wrong": sum(not s["shown_ok"] for s in summaries),
        "stored_wrong": sum(not s["stored_ok"] for s in summaries),
        "unparsed_words": sum(s["unparsed_words"] for s in summaries),
        "reconnects": sum(s["reconnects"] for s in summaries),
        "client_errors": sum(s["error_count"] for s in summaries),
        "bytes_per_word": round(
            sum(c.received_bytes for c in clients) / max(1, tokens * len(clients)), 1
        ),
        "delivery_ms": percentiles([ms for c in clients for ms in c.latencies_ms]),
        "first_token_ms": percentiles(first),
        # The first word's wait in three parts: the post answered (daphne), the run
        # claimed and the model called (the queue and the worker), the word delivered.
        "first_word_parts_ms": {
            "post": percentiles([(c.answered_us - c.posted_us) / 1000 for c in started]),
            "to_provider": percentiles(
                [(c.first_stamp_us - c.answered_us) / 1000 for c in started]
            ),
            "delivered": percentiles([(c.arrived[0] - c.first_stamp_us) / 1000 for c in started]),
        },
    }


def faultless(figures: dict[str, Any]) -> bool:
    return figures["completed"] == figures["clients"] and not any(
        figures[key]
        for key in (
            *("lost", "duplicates", "reordered", "shown_wrong", "stored_wrong"),
            "mcp_runs_wrong",
        )
    )


HEADER = (
    "| N | clients | db / redis | completed | delivered / sent | dup | reorder | lost "
    "| delivery ms p50 / p99 / max | first token ms p50 / p99 / max "
    "| peak MB worker / daphne | wall s |"
)


def table_row(label: str, result: dict[str, Any], figures: dict[str, Any]) -> str:
    def three(p: dict[str, float | None]) -> str:
        return " / ".join("-" if v is None else f"{v:.0f}" for v in p.values())

    memory = result["peak_mb"]
    return (
        f"| {result['n']} | {label} | {result['database']} / {result['redis']} "
        f"| {figures['completed']} of {figures['clients']} "
        f"| {figures['delivered']} / {figures['sent']} | {figures['duplicates']} "
        f"| {figures['reordered']} | {figures['lost']} | {three(figures['delivery_ms'])} "
        f"| {three(figures['first_token_ms'])} "
        f"| {memory.get('worker', 0):.0f} / {memory.get('daphne', 0):.0f} "
        f"| {result['wall_s']:.1f} |"
    )


def report(result: dict[str, Any]) -> None:
    if result["serve_exited_during_load"] is not None:
        print(
            f"serve exited (status {result['serve_exited_during_load']}) during the load: "
            "the clients were stopped and these figures are void"
        )
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    print(table_row(result["clients_kind"], result, result["total"]))
    for transport, figures in result["by_transport"].items():
        if result["clients_kind"] == "mixed":
            print(table_row(f"({transport} only)", result, figures))
    total = result["total"]
    print(
        f"\nshown wrong {total['shown_wrong']}, stored wrong {total['stored_wrong']}, "
        f"reconnects {total['reconnects']}, client errors {total['client_errors']}, "
        f"unparsed words {total['unparsed_words']}; provider calls "
        f"{result['provider_calls']}; CPU s during the load: "
        + ", ".join(f"{k} {v:.1f}" for k, v in result["cpu_s"].items())
        + f"; load average {result['loadavg_before']} -> {result['loadavg_after']}"
    )
    if result["peak_postgres_connections"]:
        peak = result["peak_postgres_connections"]
        print(
            f"PostgreSQL connections at most: {peak['ours']} to this stack's database, "
            f"{peak['server']} to the whole (shared) server"
        )
    words = max(1, result["n"] * result["tokens"])
    print(
        "bytes received a word: "
        + ", ".join(f"{k} {v['bytes_per_word']}" for k, v in result["by_transport"].items())
        + "; server CPU a word: "
        + ", ".join(
            f"{k} {1e6 * v / words:.0f} µs"
            for k, v in result["cpu_s"].items()
            if k in ("daphne", "worker")
        )
    )
    parts = total["first_word_parts_ms"]
    print(
        "the first word's wait, p50 / p99 ms: the post answered "
        f"{parts['post']['p50']} / {parts['post']['p99']}, then the provider called "
        f"{parts['to_provider']['p50']} / {parts['to_provider']['p99']}, then the word "
        f"delivered {parts['delivered']['p50']} / {parts['delivered']['p99']}"
    )
    lag = result["client_lag_ms"]
    print(
        f"the clients' own event loop woke late by p50 {lag['p50']} / p99 {lag['p99']} / "
        f"max {lag['max']} ms (a word it read late counts as delivered late)"
    )
    if result.get("mcp_calls"):
        print(
            f"MCP calls answered {total['mcp_calls_answered']} of "
            f"{total['mcp_calls_expected']} expected; runs with a call missing, failed or "
            f"repeated: {total['mcp_runs_wrong']}"
        )
    problems = result["serve_log"]
    print(f"serve log: {problems['lines']} problem lines")
    for gist, count in problems["top"][:8]:
        print(f"  {count:6d} x {gist}")
    errors = Counter(e[:120] for c in result["clients"] for e in c["errors"])
    for error, count in errors.most_common(5):
        print(f"  client {count} x {error}")


# --- main ------------------------------------------------------------------------------


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20, help="conversations at once")
    parser.add_argument("--tokens", type=int, default=300, help="words in each answer")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between words")
    parser.add_argument("--clients", choices=("ws", "sse", "mixed"), default="mixed")
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--redis", choices=("embedded", "system"), default="embedded")
    parser.add_argument("--concurrency", type=int, help="serve --concurrency (runs at once)")
    parser.add_argument(
        "--ramp", type=float, default=0.0,
        help="spread the clients' starts evenly over this many seconds (0: all at once)",
    )  # fmt: skip
    parser.add_argument("--web-processes", type=int, default=1, help="serve --web-processes")
    parser.add_argument("--workers", type=int, default=1, help="serve --workers")
    parser.add_argument(
        "--client-processes", type=int, default=1,
        help="split the clients over this many processes (each its own event loop)",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=300.0, help="bound of the load, s")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--log", type=Path, help="keep serve's log here")
    parser.add_argument(
        "--mcp-calls", type=int, default=0, help="MCP tool calls each run makes before answering"
    )
    args = parser.parse_args(argv)
    if args.mcp_calls < 0:
        parser.error("--mcp-calls must be 0 or more")
    if args.web_processes < 1 or args.workers < 1:
        parser.error("--web-processes and --workers must be at least 1")
    if args.client_processes < 1 or args.client_processes > args.n:
        parser.error("--client-processes must be between 1 and --n")
    if args.n < 1 or args.tokens < 1 or args.interval < 0 or args.timeout <= 0:
        parser.error("--n and --tokens must be at least 1, --interval >= 0, --timeout > 0")
    return args


def environment(
    folder: Path, provider_url: str, database: str, redis: str | None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", LITELLM_LOCAL_MODEL_COST_MAP="True",
        ORACLE_VAR_DIR=str(folder / "var"), DEBUG="false", SECRET_KEY=secrets.token_hex(32),
        ALLOWED_HOSTS="127.0.0.1,localhost", SECURE_SSL_REDIRECT="false",
        SECURE_COOKIES="false", ORACLE_MODEL="openai/fake-model",
        ORACLE_AUTO_TITLES="false",  # one call a run, the streamed answer: no title calls
        ORACLE_API_BASE=provider_url, ORACLE_API_KEY="fake", DATABASE_URL=database,
    )  # fmt: skip
    if redis:
        env["REDIS_URL"] = redis
    return env


def transports(kind: str, n: int) -> list[str]:
    if kind == "mixed":
        return ["ws" if number % 2 == 0 else "sse" for number in range(n)]
    return [kind] * n


def measure(args: argparse.Namespace, stack: Stack) -> dict[str, Any]:
    stack.tokens = create_users(stack, min(args.n, USERS))
    clients = [
        Conversation(number, transport, args.tokens)
        for number, transport in enumerate(transports(args.clients, args.n))
    ]
    wants_sessions = any(c.transport == "ws" for c in clients)
    sessions = asyncio.run(log_in_all(stack.url, len(stack.tokens))) if wants_sessions else []
    assert stack.serve is not None and stack.provider is not None
    processes = {**stack.children, "provider": stack.provider.pid}
    own_before = resource.getrusage(resource.RUSAGE_SELF)
    loadavg_before = os.getloadavg()
    database = stack.env["DATABASE_URL"].rsplit("/", 1)[-1] if args.database == "postgres" else None
    with Sampler(processes, database) as sampler:
        cpu_before = dict(sampler.cpu_s)
        if args.client_processes > 1:
            wall, clients, lags, clients_cpu = clients_in_processes(stack, sessions, clients, args)
        else:
            lags = []
            wall = asyncio.run(run_clients(stack, sessions, clients, args.timeout, args.ramp, lags))
    own_after = resource.getrusage(resource.RUSAGE_SELF)
    asyncio.run(check_clients(stack, clients))
    cpu: dict[str, float] = {}
    for name in processes:  # each kind's processes added up (daphne-2 into daphne...)
        kind = name.split("-")[0]
        cpu[kind] = cpu.get(kind, 0.0) + sampler.cpu_s[name] - cpu_before[name]
    peak_kb: dict[str, int] = {}  # the sum of each process's peak: at most that at once
    for name, kb in sampler.peak_kb.items():
        peak_kb[name.split("-")[0]] = peak_kb.get(name.split("-")[0], 0) + kb
    cpu["clients"] = (own_after.ru_utime + own_after.ru_stime) - (
        own_before.ru_utime + own_before.ru_stime
    )
    if args.client_processes > 1:
        cpu["clients"] += clients_cpu
    provider_calls = None
    with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
        log_url = stack.provider_url.removesuffix("/v1") + "/_control/log"
        provider_calls = len(httpx.get(log_url, timeout=10, trust_env=False).json()["requests"])
    by_transport = {
        kind: totals([c for c in clients if c.transport == kind], args.tokens, args.mcp_calls)
        for kind in ("ws", "sse")
        if any(c.transport == kind for c in clients)
    }
    return {
        "n": args.n,
        "tokens": args.tokens,
        "interval_s": args.interval,
        "clients_kind": args.clients,
        "database": args.database,
        "redis": args.redis,
        "concurrency": args.concurrency,
        "ramp_s": args.ramp,
        "code_from": stack.code_from,
        "cpus": os.cpu_count(),
        "loadavg_before": [round(v, 2) for v in loadavg_before],
        "loadavg_after": [round(v, 2) for v in os.getloadavg()],
        "wall_s": round(wall, 2),
        "serve_exited_during_load": stack.serve.poll(),
        "peak_mb": {name: round(kb / 1024, 1) for name, kb in peak_kb.items()},
        "web_processes": args.web_processes,
        "workers": args.workers,
        "peak_postgres_connections": sampler.peak_connections if database else None,
        "cpu_s": {name: round(seconds, 2) for name, seconds in cpu.items()},
        "provider_calls": provider_calls,
        "mcp_calls": args.mcp_calls,
        "total": totals(clients, args.tokens, args.mcp_calls),
        "client_lag_ms": percentiles([1000 * lag for lag in lags]),
        "by_transport": by_transport,
        "clients": [c.summary() for c in clients],
    }


@contextlib.contextmanager
def running_stack(args: argparse.Namespace) -> Iterator[Stack]:
    """The provider and serve, up; everything stopped and removed on the way out."""
    with contextlib.ExitStack() as cleanup:
        folder = Path(tempfile.mkdtemp(prefix="oracle-load-"))
        cleanup.callback(shutil.rmtree, folder, ignore_errors=True)
        stack = Stack(folder, {})
        # Callbacks run last first: the log is read once serve has stopped.
        if args.log:
            cleanup.callback(lambda: args.log.write_bytes(stack.log.read_bytes()))
        cleanup.callback(lambda: stack.log_problems.update(log_problems(stack.log)))
        database = prepare_database(args.database, folder, cleanup)
        redis = prepare_redis(args.redis)
        stack.env = environment(folder, "", database, redis)
        if args.mcp_calls:
            servers = {"testing": {"command": sys.executable,
                                   "args": ["-m", "tests.mcp.testing_server"],
                                   "env": {"PYTHONPATH": str(ROOT)}}}  # fmt: skip
            config = folder / "mcp.json"
            config.write_text(json.dumps({"mcpServers": servers}))
            stack.env["ORACLE_MCP_SERVERS"] = str(config)
        start_provider(stack, args, cleanup)
        stack.env["ORACLE_API_BASE"] = stack.provider_url
        start_serve(stack, args.concurrency, cleanup, args.web_processes, args.workers)
        yield stack


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    # A SIGTERM unwinds like Ctrl-C, so serve and the provider are stopped.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with running_stack(args) as stack:
            print(f"serving {stack.url}, code from {ROOT}", flush=True)
            result = measure(args, stack)
    except (RuntimeError, OSError, subprocess.SubprocessError, httpx.HTTPError) as problem:
        print(f"load: the stack did not start or stop cleanly: {problem}", file=sys.stderr)
        return 2
    result["serve_log"] = stack.log_problems
    report(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
    if result["serve_exited_during_load"] is not None:
        return 2
    return 0 if faultless(result["total"]) else 1


if __name__ == "__main__":
    sys.exit(main())
