"""The whole product as real processes (daphne, a Celery worker) on a database of its own,
for tests that cross processes. Talk to it over HTTP and WebSocket like a client would.
It can also run as several machines would: more daphnes and more workers on the same
database and Redis (`start(daphnes=2, workers=2)`)."""

from __future__ import annotations

import signal
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx
from django.conf import settings

from tests import processes
from tests.forkserver import Forked
from tests.redis_dbs import STACK_REDIS_DB


def _other_redis_db(url: str, offset: int) -> str:
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = {**parse_qs(parts.query), "db": [str(offset)]}
        return f"unix://{parts.path}?{urlencode(query, doseq=True)}"
    current = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(current + offset) % 16}"))


class OracleStack:
    def __init__(self, folder: Path, *, redis_db: int = STACK_REDIS_DB, **env: str) -> None:
        self.folder = folder
        self.port = processes.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.urls = [self.url]  # one for each daphne, the first one's first
        database_url, self._database_name = processes.scratch_database(folder, "e2e")
        self.env = processes.base_env(
            DATABASE_URL=database_url, DEBUG="false",
            REDIS_URL=_other_redis_db(settings.REDIS_URL, redis_db),
            SECRET_KEY="e2e-" + uuid.uuid4().hex * 2, ALLOWED_HOSTS="127.0.0.1,localhost",
            SECURE_SSL_REDIRECT="false", SECURE_COOKIES="false",
            # The fake provider plays scripts: a title call would take a scripted answer.
            **{"ORACLE_AUTO_TITLES": "false", **env},
        )  # fmt: skip
        self.daphnes: list[Forked] = []
        self.workers: dict[str, Forked] = {}  # by node name, in start order

    def start(self, *, daphnes: int = 1, workers: int = 1) -> OracleStack:
        for _ in range(daphnes):
            self._launch_daphne()
        names = [self._launch_worker() for _ in range(workers)]  # they start side by side
        self._wait_ready(names, live=workers)
        processes.wait_for(
            lambda: all(processes.get_status(f"{url}/healthz") == 200 for url in self.urls), 30
        )
        return self

    def _launch_daphne(self) -> None:
        port = processes.free_port() if self.daphnes else self.port  # the first on self.url
        if self.daphnes:
            self.urls.append(f"http://127.0.0.1:{port}")
        log = self.folder / f"daphne-{len(self.daphnes) + 1}.log"
        self.daphnes.append(processes.start_daphne(port, self.env, log))

    def start_worker(self) -> str:
        """Start one more worker; returns its node name once it takes tasks."""
        name = self._launch_worker()
        self._wait_ready([name], live=1)
        return name

    def _launch_worker(self) -> str:
        name = f"e2e-{self.port}-{len(self.workers) + 1}"
        self.workers[name] = processes.start_worker(self.worker_log(name), name=name, env=self.env)
        return name

    def _wait_ready(self, names: list[str], *, live: int) -> None:
        processes.wait_for(
            lambda: (
                processes.get_json(f"{self.url}/healthz")[1].get("workers", 0) >= live
                and all(self._worker_ready(name) for name in names)
            ),
            90,  # a worker imports LiteLLM as it starts: seconds, more on a busy machine
        )

    def worker_log(self, name: str) -> Path:
        return self.folder / f"worker-{name.rsplit('-', 1)[1]}.log"

    def _worker_ready(self, name: str) -> bool:
        log = self.worker_log(name).read_text()
        return f"{name}@" in log and " ready." in log

    def kill_worker(self, name: str | None = None) -> None:
        """SIGKILL a worker (the last one started, unless named), as a machine lost."""
        worker = self.workers[name or next(reversed(self.workers))]
        worker.send_signal(signal.SIGKILL)
        worker.wait()

    def stop(self) -> None:
        processes.close_shell(self.env)
        for process in [*self.workers.values(), *self.daphnes]:
            processes.stop(process)
        processes.drop_scratch_database(self._database_name)

    def create_user(self, username: str) -> str:
        """Create a user and return an API token for them."""
        return processes.create_user(username, env=self.env)

    def client(self, token: str, url: str | None = None) -> httpx.Client:
        """An API client of `token`'s user, talking to the first daphne unless `url`."""
        return httpx.Client(
            base_url=url or self.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
