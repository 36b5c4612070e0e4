"""`manage.py serve` (what `make run` runs): the whole product up, then down on Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests import processes


def test_it_starts_everything_and_ctrl_c_leaves_nothing_behind(tmp_path: Path) -> None:
    port = processes.free_port()
    env = processes.base_env(
        ORACLE_VAR_DIR=str(tmp_path), REDIS_URL=None, DATABASE_URL=None, ORACLE_PORT=str(port)
    )
    serve = processes.start([sys.executable, "manage.py", "serve"], env, tmp_path / "serve.log")
    base = f"http://127.0.0.1:{port}"
    try:
        status, health = processes.wait_for(
            lambda: (h := processes.get_json(f"{base}/healthz"))[1].get("workers") and h,
            timeout=60,
        )
        assert status == 200
        assert health == {"status": "ok", "database": "ok", "redis": "ok", "workers": 1}
        assert processes.get_status(f"{base}/signup/") == 200
        assert (tmp_path / "oracle.sqlite3").exists()  # migrated into the var folder
        printed = (tmp_path / "serve.log").read_text()
        assert f"Oracle is running at http://localhost:{port}/" in printed
        # A fresh site: its administrator signs up with a staff invite printed here.
        setup = re.search(r"create that account at (http://\S+)", printed)
        assert setup is not None, printed
        assert processes.get_status(setup[1]) == 200
        # Hundreds of people opening the site in the same second wait to be accepted,
        # not reset: the listening socket's queue (ss's Send-Q) holds more than 50.
        listening = subprocess.run(
            ["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, check=True
        ).stdout.split()
        assert int(listening[2]) >= 1024, listening
    finally:
        code = processes.stop(serve, signal.SIGINT, timeout=30)

    log = (tmp_path / "serve.log").read_text()
    assert code == 0, log
    assert "Stopped." in log
    left = (
        processes.processes_mentioning(str(tmp_path))
        + processes.processes_mentioning(f"port={port}:")
        + processes.processes_mentioning(f"oracle-{serve.pid}@")
    )
    assert left == [], left


def test_two_daphnes_share_the_port_and_one_killed_leaves_the_site_up(tmp_path: Path) -> None:
    """`--web-processes 2 --workers 2`: both daphnes accept on the one socket serve
    listens on, so when one dies the other answers every request while serve starts
    it again; two workers report in; Ctrl-C stops all four."""
    port = processes.free_port()
    env = processes.base_env(
        ORACLE_VAR_DIR=str(tmp_path), REDIS_URL=None, DATABASE_URL=None, ORACLE_PORT=str(port)
    )
    command = [sys.executable, "manage.py", "serve", "--web-processes", "2", "--workers", "2"]
    serve = processes.start(command, env, tmp_path / "serve.log")
    base = f"http://127.0.0.1:{port}"
    try:
        status, health = processes.wait_for(
            lambda: (h := processes.get_json(f"{base}/healthz"))[1].get("workers") == 2 and h,
            timeout=90,
        )
        assert status == 200 and health["workers"] == 2
        children = _children(serve.pid)
        daphnes = [pid for pid, line in children.items() if " -m daphne " in line]
        workers = [pid for pid, line in children.items() if " -m celery " in line]
        assert len(daphnes) == 2 and len(workers) == 2, children

        os.kill(daphnes[1], signal.SIGKILL)
        answered = [processes.get_status(f"{base}/healthz") for _ in range(40)]

        assert answered == [200] * 40
        processes.wait_for(
            lambda: "daphne-2 started again" in (tmp_path / "serve.log").read_text(), timeout=30
        )
        assert processes.get_status(f"{base}/signup/") == 200
    finally:
        code = processes.stop(serve, signal.SIGINT, timeout=30)

    assert code == 0, (tmp_path / "serve.log").read_text()
    left = [pid for pid in [*children, *_children(serve.pid)] if _alive(pid)]
    assert left == [], left


def test_a_port_already_taken_is_refused_in_words(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = processes.base_env(
            ORACLE_VAR_DIR=str(tmp_path), REDIS_URL=None, DATABASE_URL=None, ORACLE_PORT=str(port)
        )
        finished = subprocess.run(
            [sys.executable, "manage.py", "serve"], env=env, capture_output=True, text=True,
            timeout=60, check=False,
        )  # fmt: skip

    assert finished.returncode != 0
    assert f"Cannot listen on 127.0.0.1:{port}: Address already in use." in finished.stderr
    assert processes.processes_mentioning(str(tmp_path)) == []  # its embedded Redis too


def _children(pid: int) -> dict[int, str]:
    """The live child processes of `pid`, with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and int(stat[1]) == pid and stat[0] != "Z":
            found[int(entry.name)] = cmdline
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
