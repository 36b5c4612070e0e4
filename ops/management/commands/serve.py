"""`manage.py serve`: the whole product in one command (what `make run` calls).

Migrates the database, makes sure Redis answers (the embedded one when
`REDIS_URL` is unset; settings start it), then runs daphne and a Celery worker
(`--web-processes` daphnes sharing the port, `--workers` workers; one of each
by default) as child processes, prints the URL, and supervises them: a child that
dies is started again after a backoff (0.5 s, doubling to 30 s; back to 0.5 s
once it has run a minute), with a log line, while the others keep serving. The
embedded Redis is watched the same way. Ctrl-C or SIGTERM stops the children
and the embedded Redis, then exits.

Written here rather than with supervisord or circus: each child must die with
this process (PR_SET_PDEATHSIG, so a killed `make run` leaves nothing behind),
the embedded Redis is started under a file lock that other Oracle processes
share, and the whole loop is a few dozen lines.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ops.embedded_redis import EmbeddedRedisError, embedded_redis_for
from ops.lifecycle import die_with_parent

BACKOFF_FIRST = 0.5
BACKOFF_MAX = 30.0
HEALTHY_AFTER = 60.0  # a child that ran this long starts again from the first backoff
REDIS_CHECK_SECONDS = 1.0
LISTEN_BACKLOG = 1024  # connections waiting for daphne to accept them (the kernel caps it)
MAX_PROCESSES = 64  # of each kind


@dataclass
class Supervised:
    """A thing to keep alive: when it is down, start it again after a backoff."""

    failures: int = 0
    started_at: float = field(default_factory=time.monotonic)
    next_start: float | None = None  # when it is down: when to start it again

    def went_down(self, now: float) -> float:
        if now - self.started_at >= HEALTHY_AFTER:
            self.failures = 0
        delay: float = min(BACKOFF_MAX, BACKOFF_FIRST * 2**self.failures)
        self.failures += 1
        self.next_start = now + delay
        return delay

    def due(self, now: float) -> bool:
        return self.next_start is not None and now >= self.next_start

    def started(self, now: float) -> None:
        self.started_at, self.next_start = now, None


class Command(BaseCommand):
    help = "Run Oracle: migrate, then daphne and a Celery worker (and the embedded Redis)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=settings.ORACLE_HOST)
        parser.add_argument("--port", type=int, default=settings.ORACLE_PORT)
        parser.add_argument(
            "--web-processes",
            type=int,
            default=settings.ORACLE_WEB_PROCESSES,
            help="daphne processes sharing the port",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=settings.ORACLE_WORKER_PROCESSES,
            help="Celery worker processes",
        )
        parser.add_argument(
            "--concurrency",
            type=int,
            default=settings.ORACLE_WORKER_CONCURRENCY,
            help="concurrent runs per worker (threads)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        host, port = options["host"], options["port"]
        if not 1 <= port <= 65535:
            raise CommandError(f"--port must be between 1 and 65535, not {port}")
        if options["concurrency"] < 1:
            raise CommandError("--concurrency must be at least 1")
        for option in ("web_processes", "workers"):
            if not 1 <= options[option] <= MAX_PROCESSES:
                flag = "--" + option.replace("_", "-")
                raise CommandError(f"{flag} must be between 1 and {MAX_PROCESSES}")
        if ":" in host and options["web_processes"] > 1:
            raise CommandError("--web-processes above 1 needs an IPv4 --host.")
        self._stopping = False
        signal.signal(signal.SIGINT, self._request_stop)
        signal.signal(signal.SIGTERM, self._request_stop)

        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write(f"Database ready ({settings.DATABASES['default']['ENGINE']}).")
        if settings.EMBEDDED_REDIS:
            self.stdout.write(f"Embedded Redis on {settings.REDIS_URL}.")
        else:
            self.stdout.write("Using Redis at REDIS_URL.")

        try:
            listener = _listen(host, port)
        except CommandError:
            if settings.EMBEDDED_REDIS_STARTED_HERE:  # nothing of ours is left running
                embedded_redis_for(settings.VAR_DIR).stop()
            raise
        # Every daphne accepts on the one socket this process listens on (the kernel
        # hands each connection to one of them), so that a page, a post and a stream
        # use all the cores: one process runs Python on one core at a time.
        if listener.family == socket.AF_INET:
            endpoint = f"fd:fileno={listener.fileno()}"
        else:  # daphne's fd: endpoint takes IPv4 only; one daphne listens itself
            listener.close()
            interface = host.strip("[]").replace(":", r"\:")
            endpoint = f"tcp:port={port}:interface={interface}:backlog={LISTEN_BACKLOG}"
        daphne = [sys.executable, "-m", "daphne", "-e", endpoint,
                  "--proxy-headers", "oracle.asgi:application"]  # fmt: skip
        commands: dict[str, list[str]] = {}
        for k in range(options["web_processes"]):
            commands[_numbered("daphne", k)] = daphne
        for k in range(options["workers"]):
            commands[_numbered("worker", k)] = [
                sys.executable, "-m", "celery", "-A", "oracle", "worker",
                "--pool", "threads", "--concurrency", str(options["concurrency"]),
                "--hostname", f"{_numbered(f'oracle-{os.getpid()}', k)}@%h", "--loglevel", "INFO",
                "--without-gossip", "--without-mingle",
            ]  # fmt: skip
        self._listener = listener
        children = {name: self._spawn(command) for name, command in commands.items()}
        watch = {name: Supervised() for name in [*commands, "redis"]}
        announced = False
        redis_checked = time.monotonic()
        try:
            while not self._stopping:
                now = time.monotonic()
                for name, process in children.items():
                    state = watch[name]
                    if state.next_start is None and process.poll() is not None:
                        delay = state.went_down(now)
                        self.stderr.write(
                            f"{name} exited with status {process.returncode}; "
                            f"starting it again in {delay:.1f} s."
                        )
                    elif state.due(now):
                        children[name] = self._spawn(commands[name])
                        state.started(now)
                        self.stderr.write(f"{name} started again (pid {children[name].pid}).")
                if settings.EMBEDDED_REDIS and now - redis_checked >= REDIS_CHECK_SECONDS:
                    redis_checked = now
                    self._watch_redis(watch["redis"], now)
                if not announced and _port_open(host, port):
                    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
                    self.stdout.write(
                        self.style.SUCCESS(f"Oracle is running at http://{shown}:{port}/")
                        + "  (Ctrl-C to stop)"
                    )
                    self._offer_setup(f"http://{shown}:{port}")
                    announced = True
                time.sleep(0.2)
        finally:
            self._shutdown(children)

    def _offer_setup(self, base: str) -> None:
        """While the site has no staff account, the link its administrator signs up
        with (a staff invite: staff rights go to whoever holds it, not to whoever
        reaches a fresh site first)."""
        from accounts.services import setup_invite

        invite = setup_invite()
        if invite is not None:
            self.stdout.write(f"No administrator yet: create that account at {base}{invite.path()}")

    def _watch_redis(self, state: Supervised, now: float) -> None:
        """Start the embedded Redis again if it stopped answering."""
        embedded = embedded_redis_for(settings.VAR_DIR)
        if state.next_start is None:
            if embedded.is_running():
                return
            state.next_start = now  # the first try at once, then with backoff
            self.stderr.write("The embedded Redis stopped answering; starting it again.")
        if not state.due(now):
            return
        try:
            embedded.ensure_running()
        except EmbeddedRedisError as problem:
            delay = state.went_down(now)
            self.stderr.write(f"{problem}; trying again in {delay:.1f} s.")
            return
        state.started(now)
        self.stderr.write(f"The embedded Redis is back on {settings.REDIS_URL}.")

    def _request_stop(self, signum: int, frame: object) -> None:
        self._stopping = True

    def _spawn(self, command: list[str]) -> subprocess.Popen[bytes]:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if settings.EMBEDDED_REDIS:
            # Children reuse the server this process found or started.
            env["ORACLE_VAR_DIR"] = str(settings.VAR_DIR)
        # Own process group: a terminal's Ctrl-C reaches only this supervisor,
        # which then stops the children in order.
        shared = () if self._listener.fileno() < 0 else (self._listener.fileno(),)
        return subprocess.Popen(command, env=env, preexec_fn=_preexec, pass_fds=shared)

    def _shutdown(self, children: dict[str, subprocess.Popen[bytes]]) -> None:
        self.stdout.write("Stopping…")
        for process in children.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in children.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if settings.EMBEDDED_REDIS:
            embedded_redis_for(settings.VAR_DIR).stop()
        self.stdout.write("Stopped.")


def _preexec() -> None:
    os.setpgrp()
    die_with_parent()


def _numbered(name: str, k: int) -> str:
    """`daphne`, `daphne-2`, ...: the first of each keeps its name of before (logs)."""
    return name if k == 0 else f"{name}-{k + 1}"


def _listen(host: str, port: int) -> socket.socket:
    """The port every daphne accepts on, with room for a crowd: daphne's own -b/-p
    listen with Twisted's backlog of 50, and 200 people opening the page in the same
    second overflowed it (the kernel reset some of their connections, bench/README.md)."""
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((address, port))
    except OSError as error:
        listener.close()
        raise CommandError(f"Cannot listen on {host}:{port}: {error.strerror}.") from error
    listener.listen(LISTEN_BACKLOG)
    listener.set_inheritable(True)
    return listener


def _port_open(host: str, port: int) -> bool:
    target = "127.0.0.1" if host == "0.0.0.0" else host
    try:
        with socket.create_connection((target, port), timeout=0.2):
            return True
    except OSError:
        return False
