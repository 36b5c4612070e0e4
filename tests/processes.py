"""Real processes for tests that cross them: Celery workers, `manage.py serve`, daphne."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from django.conf import settings

from agents.testing.fake_server import FakeServer
from ops.lifecycle import die_with_parent
from tests import forkserver

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def model_env(provider: FakeServer) -> dict[str, str]:
    """The settings that point Oracle's processes at the fake provider."""
    return {
        "ORACLE_MODEL": "openai/fake-model",
        "ORACLE_API_BASE": provider.base_url,
        "ORACLE_API_KEY": "fake-key",
    }


def base_env(**overrides: str | None) -> dict[str, str]:
    """The test process's environment, pointing children at the same Redis; None removes."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["DJANGO_SETTINGS_MODULE"] = "tests.settings"  # passwords hashed the quick way
    env["PYTHONPATH"] = str(ROOT)  # where `tests` is, whatever a process's folder
    env["ORACLE_VAR_DIR"] = str(settings.VAR_DIR)
    env.setdefault("ORACLE_SIGNUP", "open")  # the suite's sites let anyone sign up
    for name in ("LOGIN", "LOGIN_USER", "SIGNUP", "BAD_TOKENS"):  # and log in often
        env.setdefault(f"ORACLE_RATE_{name}", "100000/m")
    if not settings.EMBEDDED_REDIS:
        env["REDIS_URL"] = settings.REDIS_URL
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def manage(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`python manage.py ARGS`, forked from the suite's fork server (`tests/forkserver.py`)."""
    return forkserver.run_manage(*args, env=env or base_env(), timeout=timeout)


def scratch_database(folder: Path, prefix: str) -> tuple[str, str | None]:
    """A database of its own for a stack of real processes, of the suite's kind and
    already migrated: a copy, under `folder` on SQLite, a new database on the suite's
    PostgreSQL, of the one this process migrated once (`_migrated_template`), so the
    stack's processes have no migrating left to do. Returns its URL and, on PostgreSQL,
    its name for `drop_scratch_database`."""
    if "postgresql" not in settings.DATABASES["default"]["ENGINE"]:
        return migrated_sqlite(folder / f"{prefix}.sqlite3"), None
    name = _create_database(prefix, template=_migrated_template(postgres=True))
    return _postgres_url(name), name


def _create_database(prefix: str, *, template: str | None = None) -> str:
    """A new database on the suite's PostgreSQL (a copy of `template`, if given): its name."""
    import psycopg

    name = f"oracle_{prefix}_{uuid.uuid4().hex[:10]}"
    copied = f' TEMPLATE "{template}"' if template is not None else ""
    with psycopg.connect(_admin_dsn(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"{copied}')
    return name


def _postgres_url(name: str) -> str:
    database = settings.DATABASES["default"]
    user, host = database["USER"] or "postgres", database["HOST"] or "127.0.0.1"
    return f"postgres://{user}@{host}:{database['PORT'] or 5432}/{name}"


def migrated_sqlite(path: Path) -> str:
    """The URL of a SQLite database at `path`, a copy of a migrated one (made once)."""
    shutil.copyfile(_migrated_template(postgres=False), path)
    return f"sqlite:///{path}"


_templates: dict[bool, str] = {}  # this process's migrated databases, once made


def _migrated_template(postgres: bool) -> str:
    """A database this process migrated (a SQLite file's path, or a PostgreSQL database's
    name), made on first use from the checkout's migrations and removed at the session's
    end (`drop_migrated_templates`). Made once per process, never kept between runs:
    migrations change."""
    if postgres in _templates:
        return _templates[postgres]
    if postgres:
        template = _create_database("template")
        url = _postgres_url(template)
    else:
        template = str(Path(tempfile.mkdtemp(prefix="oracle-template-")) / "migrated.sqlite3")
        url = f"sqlite:///{template}"
    done = manage("migrate", "--noinput", env=base_env(DATABASE_URL=url), timeout=120)
    assert done.returncode == 0, done.stderr
    _templates[postgres] = template
    return template


@atexit.register
def drop_migrated_templates() -> None:
    """Remove the databases `_migrated_template` made (at the session's end; at exit too,
    in case the session did not end)."""
    for postgres, template in list(_templates.items()):
        del _templates[postgres]
        if postgres:
            drop_scratch_database(template)
        else:
            shutil.rmtree(Path(template).parent, ignore_errors=True)


def drop_scratch_database(name: str | None) -> None:
    if name:
        import psycopg

        with psycopg.connect(_admin_dsn(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _admin_dsn() -> str:
    database = settings.DATABASES["default"]
    return (
        f"host={database['HOST'] or '127.0.0.1'} port={database['PORT'] or 5432} "
        f"user={database['USER'] or 'postgres'} dbname=postgres"
    )


def create_user(username: str, *, env: dict[str, str]) -> str:
    """Create a user (password "correct horse battery") through `env`'s shell; returns an
    API token for them."""
    code = (
        "from django.contrib.auth.models import User;"
        "from accounts.services import api_token_create;"
        f"user = User.objects.create_user({username!r}, password='correct horse battery');"
        "print(api_token_create(user=user, name='command line')[1])"
    )
    created = shell(code, env=env)
    assert created.returncode == 0, created.stderr
    return created.stdout.strip().splitlines()[-1]


# A `manage.py shell` that runs one snippet of code a line on stdin, each in a fresh
# namespace, and answers each with a line of JSON: what it printed, and its traceback if
# it raised. Connections are closed after each: the next snippet reads what other
# processes wrote since, and a scratch database can be dropped at any time.
_SERVE_SNIPPETS = """
import contextlib, io, json, sys, traceback
from django.db import connections
answers = sys.__stdout__
for line in sys.stdin:
    printed, failed = io.StringIO(), ""
    try:
        with contextlib.redirect_stdout(printed):
            exec(json.loads(line), {"__name__": "__snippet__"})
    except BaseException:
        failed = traceback.format_exc()
    finally:
        connections.close_all()
    answers.write(json.dumps({"stdout": printed.getvalue(), "stderr": failed}) + "\\n")
    answers.flush()
"""


class Shell:
    """One `manage.py shell` on an environment, kept for every snippet the tests run on
    it: Django takes a second of CPU to start, and the suite ran some eighty of them
    (mostly to create users)."""

    def __init__(self, env: dict[str, str]) -> None:
        command = [sys.executable, "manage.py", "shell", "--no-imports", "-c", _SERVE_SNIPPETS]
        # What it logs goes to a file: a pipe nobody reads while it lives would fill up
        # and stop it mid-snippet.
        self.log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - lives as long as the shell
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.log, text=True, preexec_fn=die_with_parent,
        )  # fmt: skip
        self.lock = threading.Lock()

    def run(self, code: str) -> subprocess.CompletedProcess[str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        with self.lock:
            self.process.stdin.write(json.dumps(code) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        if not line:  # the shell died: what it said is in its log
            self.process.wait()
            self.log.seek(0)
            return subprocess.CompletedProcess([], 1, "", self.log.read())
        answer = json.loads(line)
        return subprocess.CompletedProcess([], 1 if answer["stderr"] else 0, **answer)

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


_shells: dict[tuple[tuple[str, str], ...], Shell] = {}


def _shell_key(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(env.items()))


def shell(code: str, *, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`manage.py shell -c code` with `env`, run by the shell kept for that environment
    (started on first use, until `close_shell(env)`)."""
    key = _shell_key(env)
    found = _shells.get(key)
    if found is not None and found.process.poll() is not None:  # it died: start another
        found.close()
        found = None
    if found is None:
        found = _shells[key] = Shell(env)
    return found.run(code)


def close_shell(env: dict[str, str]) -> None:
    """Stop the shell kept for `env`, if any: before its database or Redis goes away."""
    found = _shells.pop(_shell_key(env), None)
    if found is not None:
        found.close()


@atexit.register
def _close_shells() -> None:
    while _shells:
        _shells.popitem()[1].close()


def wait_for(check: Callable[[], T | None], timeout: float, interval: float = 0.1) -> T:
    """Poll until `check` returns something truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            result = check()
        except Exception as error:  # the thing polled may not be up yet
            last_error = error
            result = None
        if result:
            return result
        time.sleep(interval)
    raise AssertionError(f"gave up after {timeout} s (last error: {last_error!r})")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get_json(url: str, timeout: float = 5) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def get_status(url: str, timeout: float = 5) -> int:
    request = urllib.request.Request(url)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    handle = open(log, "wb")  # noqa: SIM115 - lives as long as the process
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
        preexec_fn=die_with_parent,  # nothing outlives a killed test run
    )


def start_daphne(port: int, env: dict[str, str], log: Path) -> forkserver.Forked:
    """`python -m daphne` serving the app on `port`, forked from the suite's fork server
    (`tests/forkserver.py`): Django, Channels and Twisted are already imported there."""
    command = ["-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "oracle.asgi:application"]
    return _forked(command, env, log)


def start_worker(log: Path, *, name: str, env: dict[str, str] | None = None) -> forkserver.Forked:
    """`python -m celery -A oracle worker` as `manage.py serve` starts it, but forked from
    the suite's fork server (`tests/forkserver.py`): a worker imports LiteLLM as it starts,
    some 3 s of CPU, and the suite starts dozens of them."""
    command = [
        "-m", "celery", "-A", "oracle", "worker", "--pool", "threads",
        "--concurrency", "4", "--hostname", f"{name}@%h", "--loglevel", "INFO",
        "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    return _forked(command, env or base_env(), log)


def _forked(argv: list[str], env: dict[str, str], log: Path) -> forkserver.Forked:
    """`python ARGV` forked from the suite's fork server, its output (both streams) in
    `log`, reading nothing."""
    with open(log, "wb") as output, open(os.devnull, "rb") as nothing:
        stdio = (nothing.fileno(), output.fileno(), output.fileno())
        return forkserver.server().start(argv, env=env, cwd=ROOT, stdio=stdio)


def stop(
    process: subprocess.Popen[bytes] | forkserver.Forked,
    sig: int = signal.SIGTERM,
    timeout: float = 20,
) -> int:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    return int(process.returncode)


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that contain `text` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            status = (entry / "stat").read_text().split()[2]
        except OSError:
            continue
        if text in cmdline and status != "Z":
            found.append(f"{entry.name}: {cmdline.strip()}")
    return found
