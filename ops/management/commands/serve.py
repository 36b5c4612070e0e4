"""`manage.py serve`: the whole product in one command (what `make run` calls).

Migrates the database, makes sure Redis answers (the embedded one when
`REDIS_URL` is unset; settings start it), then runs daphne and one Celery
worker as child processes, prints the URL, and on Ctrl-C or SIGTERM stops the
children and the embedded Redis before exiting. If a child dies on its own,
the rest are stopped too and the command exits non-zero.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ops.embedded_redis import embedded_redis_for
from ops.lifecycle import die_with_parent


class Command(BaseCommand):
    help = "Run Oracle: migrate, then daphne and a Celery worker (and the embedded Redis)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=settings.ORACLE_HOST)
        parser.add_argument("--port", type=int, default=settings.ORACLE_PORT)
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
        self._stopping = False
        signal.signal(signal.SIGINT, self._request_stop)
        signal.signal(signal.SIGTERM, self._request_stop)

        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write(f"Database ready ({settings.DATABASES['default']['ENGINE']}).")
        if settings.EMBEDDED_REDIS:
            self.stdout.write(f"Embedded Redis on {settings.REDIS_URL}.")
        else:
            self.stdout.write("Using Redis at REDIS_URL.")

        daphne = [sys.executable, "-m", "daphne", "-b", host, "-p", str(port),
                  "--proxy-headers", "oracle.asgi:application"]  # fmt: skip
        worker = [sys.executable, "-m", "celery", "-A", "oracle", "worker",
                  "--pool", "threads", "--concurrency", str(options["concurrency"]),
                  "--hostname", f"oracle-{os.getpid()}@%h", "--loglevel", "INFO",
                  "--without-gossip", "--without-mingle"]  # fmt: skip
        children = {"daphne": self._spawn(daphne), "worker": self._spawn(worker)}
        exit_code = 0
        announced = False
        try:
            while not self._stopping:
                for name, process in children.items():
                    if process.poll() is not None:
                        self.stderr.write(f"{name} exited with status {process.returncode}.")
                        exit_code = 1
                        self._stopping = True
                if not announced and _port_open(host, port):
                    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
                    self.stdout.write(
                        self.style.SUCCESS(f"Oracle is running at http://{shown}:{port}/")
                        + "  (Ctrl-C to stop)"
                    )
                    announced = True
                time.sleep(0.2)
        finally:
            self._shutdown(children)
        if exit_code:
            sys.exit(exit_code)

    def _request_stop(self, signum: int, frame: object) -> None:
        self._stopping = True

    def _spawn(self, command: list[str]) -> subprocess.Popen[bytes]:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if settings.EMBEDDED_REDIS:
            # Children reuse the server this process found or started.
            env["ORACLE_VAR_DIR"] = str(settings.VAR_DIR)
        # Own process group: a terminal's Ctrl-C reaches only this supervisor,
        # which then stops the children in order.
        return subprocess.Popen(command, env=env, preexec_fn=_preexec)

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


def _port_open(host: str, port: int) -> bool:
    target = "127.0.0.1" if host == "0.0.0.0" else host
    try:
        with socket.create_connection((target, port), timeout=0.2):
            return True
    except OSError:
        return False
