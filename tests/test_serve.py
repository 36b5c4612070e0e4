"""`manage.py serve` (what `make run` runs): the whole product up, then down on Ctrl-C."""

from __future__ import annotations

import re
import signal
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
