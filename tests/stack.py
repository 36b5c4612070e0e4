"""The whole product as real processes (daphne, a Celery worker) on a database of its own,
for tests that cross processes. Talk to it over HTTP and WebSocket like a client would."""

from __future__ import annotations

import signal
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx
from django.conf import settings

from tests import processes


def _other_redis_db(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = {**parse_qs(parts.query), "db": [str(_STACK_REDIS_DB)]}
        return f"unix://{parts.path}?{urlencode(query, doseq=True)}"
    current = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(current + _STACK_REDIS_DB) % 16}"))


_STACK_REDIS_DB = 7


class OracleStack:
    def __init__(self, folder: Path, **env: str) -> None:
        self.folder = folder
        self.port = processes.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        database_url, self._database_name = processes.scratch_database(folder, "e2e")
        # A Redis database of its own: no other test worker takes this stack's tasks.
        self.env = processes.base_env(
            DATABASE_URL=database_url, DEBUG="false",
            REDIS_URL=_other_redis_db(settings.REDIS_URL),
            SECRET_KEY="e2e-" + uuid.uuid4().hex * 2, ALLOWED_HOSTS="127.0.0.1,localhost",
            SECURE_SSL_REDIRECT="false", SECURE_COOKIES="false",
            # The fake provider plays scripts: a title call would take a scripted answer.
            **{"ORACLE_AUTO_TITLES": "false", **env},
        )  # fmt: skip
        self.daphne: Any = None
        self.worker: Any = None
        self._worker_count = 0

    def start(self) -> OracleStack:
        result = processes.manage("migrate", "--noinput", env=self.env, timeout=120)
        assert result.returncode == 0, result.stderr
        command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port),
                   "oracle.asgi:application"]  # fmt: skip
        self.daphne = processes.start(command, self.env, self.folder / "daphne.log")
        self.start_worker()
        processes.wait_for(lambda: processes.get_status(f"{self.url}/healthz") == 200, 30)
        return self

    def start_worker(self) -> None:
        self._worker_count += 1
        name = f"e2e-{self.port}-{self._worker_count}"
        self.worker = processes.start_worker(
            self.folder / f"worker-{self._worker_count}.log", name=name, env=self.env
        )
        processes.wait_for(
            lambda: (
                processes.get_json(f"{self.url}/healthz")[1].get("workers", 0) >= 1
                and self._worker_ready(name)
            ),
            60,
        )

    def _worker_ready(self, name: str) -> bool:
        log = (self.folder / f"worker-{self._worker_count}.log").read_text()
        return f"{name}@" in log and " ready." in log

    def kill_worker(self) -> None:
        self.worker.send_signal(signal.SIGKILL)
        self.worker.wait()

    def stop(self) -> None:
        for process in (self.worker, self.daphne):
            if process is not None:
                processes.stop(process)
        processes.drop_scratch_database(self._database_name)

    def create_user(self, username: str) -> str:
        """Create a user and return an API token for them."""
        return processes.create_user(username, env=self.env)

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
