"""A fork server for the suite's one-shot `manage.py` commands (`ask` above all), and
for the Celery workers and daphnes of the sites the tests start.

Each `manage.py ask` spent some 3 s of CPU importing LiteLLM before it did anything,
and the suite ran thirty of them. This server imports LiteLLM and the engine once, then
forks a process for each command. The forked process is a real one, with its own
environment, working folder, arguments and standard streams (the caller's, passed over a
Unix socket): it sets them, then runs `manage.py` as `python manage.py ...` would,
Django settings and all, since nothing that reads the environment was imported before
the fork. Only what is imported differs: it is already in memory (a daphne started
so spends 0.5 s of CPU where it spent 1.7 s here).

    python -m tests.forkserver SOCKET

Each request is one SOCK_SEQPACKET message, JSON {argv, env, cwd} with three file
descriptors (stdin, stdout, stderr). The server forks a keeper for it, which forks the
command, answers with the command's pid, waits for it and answers with its exit code
(as `subprocess` gives it: -N for a signal). The server itself stays single-threaded
and never waits, so every fork is of a process with one thread.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import runpy
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path

from ops.lifecycle import die_with_parent

ROOT = Path(__file__).resolve().parent.parent
PRELOADED = (
    "litellm", "agents.litellm_model", "django.core.management", "mcp", "httpx",
    "celery.bin.celery", "celery.apps.worker", "celery.concurrency.thread",
    "kombu.transport.redis", "celery.backends.redis",
    # daphne's, but not daphne.server (nor daphne.cli, which imports it): that installs
    # Twisted's asyncio reactor, an event loop whose epoll every child would share.
    "twisted.internet.endpoints", "twisted.web.http", "autobahn.twisted.websocket",
    "daphne.access", "daphne.endpoints", "daphne.http_protocol", "daphne.ws_protocol",
    "channels.routing", "channels.layers", "channels.generic.websocket",
)  # fmt: skip


def serve(path: str) -> None:
    for name in PRELOADED:
        __import__(name)
    assert "twisted.internet.reactor" not in sys.modules, "a reactor was installed before a fork"
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            listener.close()
            _keep(connection)
        connection.close()


def _keep(connection: socket.socket) -> None:
    """In the keeper: start the command, report its pid and then its exit code."""
    die_with_parent()
    code = 1
    try:
        message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
        request = json.loads(message)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        pid = os.fork()
        if pid == 0:
            connection.close()
            _run(request, fds)
        for fd in fds:
            os.close(fd)
        connection.send(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        connection.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
        code = 0
    finally:
        os._exit(code)


def _run(request: dict, fds: list[int]) -> None:
    """In the command's process: become `python manage.py ...` and run it."""
    code = 1
    try:
        die_with_parent()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        argv = list(request["argv"])
        try:
            if argv[0] == "-m":  # python -m MODULE ARGS
                sys.argv, sys.path[0] = argv[1:], os.getcwd()
                runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
            elif argv[0] == "-c":  # python -c CODE ARGS
                sys.argv, sys.path[0] = ["-c", *argv[2:]], ""
                exec(argv[1], {"__name__": "__main__"})
            else:  # python SCRIPT ARGS
                sys.argv, sys.path[0] = argv, str(Path(argv[0]).resolve().parent)
                runpy.run_path(argv[0], run_name="__main__")
            code = 0
        except SystemExit as exit:
            code = _exit_code(exit)
        except BaseException:
            traceback.print_exc()
        with contextlib.suppress(BaseException):
            threading._shutdown()  # type: ignore[attr-defined]  # as the interpreter does
            atexit._run_exitfuncs()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _exit_code(exit: SystemExit) -> int:
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=sys.stderr)
    return 1


class ForkServer:
    """The server, run as a child of the test process, and its client."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="oracle-fork-")
        self.path = os.path.join(self.folder, "socket")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.forkserver", self.path],
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=die_with_parent,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready", "the fork server did not start"

    def start(
        self, argv: list[str], *, env: dict[str, str], cwd: Path, stdio: tuple[int, int, int]
    ) -> Forked:
        """`python ARGV` (a script and its arguments, or "-m" and a module's, or "-c" and
        code) with `env`
        in `cwd`, on the file descriptors `stdio`."""
        client = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        client.connect(self.path)
        request = json.dumps({"argv": argv, "env": env, "cwd": str(cwd)}).encode()
        socket.send_fds(client, [request], list(stdio))
        return Forked(argv, client)

    def run(
        self, argv: list[str], *, env: dict[str, str], cwd: Path, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """Like `subprocess.run([python, *argv], capture_output=True, text=True)`."""
        with (
            open(os.devnull) as stdin,
            tempfile.TemporaryFile("w+") as stdout,
            tempfile.TemporaryFile("w+") as stderr,
        ):
            process = self.start(
                argv, env=env, cwd=cwd, stdio=(stdin.fileno(), stdout.fileno(), stderr.fileno())
            )
            try:
                returncode = process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise
            stdout.seek(0)
            stderr.seek(0)
            return subprocess.CompletedProcess(argv, returncode, stdout.read(), stderr.read())

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
            os.rmdir(self.folder)


class Forked:
    """A forked command, handled as a `subprocess.Popen` is: pid, poll, wait, signals."""

    def __init__(self, argv: list[str], connection: socket.socket) -> None:
        self.args = argv
        self.returncode: int | None = None
        self._connection = connection
        self.pid = int(json.loads(connection.recv(4096))["pid"])

    def poll(self) -> int | None:
        if self.returncode is None:
            self._connection.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                self._ended(self._connection.recv(4096))
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._connection.settimeout(timeout)
            try:
                self._ended(self._connection.recv(4096))
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
        assert self.returncode is not None
        return self.returncode

    def _ended(self, answer: bytes) -> None:
        # b"": the keeper is gone (the server was stopped), and the command with it
        self.returncode = json.loads(answer)["returncode"] if answer else -signal.SIGKILL
        self._connection.close()

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


_server: ForkServer | None = None


def server() -> ForkServer:
    """The test process's fork server, started on first use."""
    global _server
    if _server is None or _server.process.poll() is not None:
        _server = ForkServer()
        atexit.register(_server.close)
    return _server


def run_manage(*args: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`python manage.py ARGS` with `env`, forked from the server."""
    return server().run(["manage.py", *args], env=env, cwd=ROOT, timeout=timeout)


if __name__ == "__main__":
    serve(sys.argv[1])
