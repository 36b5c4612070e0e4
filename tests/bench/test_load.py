"""The load script at a tiny N, so it does not rot (bench/load.py).

It runs as a user runs it, in a process of its own that starts `manage.py serve`
and the fake provider; on the suite's kind of database, with an embedded Redis of
its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]


def test_it_streams_every_word_to_websocket_and_sse_clients(tmp_path: Path) -> None:
    """Each run calls an MCP tool twice (the worker's stdio server) before it answers.
    The clients are split over two forked processes (`--client-processes`): the path
    that counts, merges and reports their figures, around the one each client runs."""
    out = tmp_path / "load.json"
    database = "postgres" if "postgresql" in settings.DATABASES["default"]["ENGINE"] else "sqlite"
    command = [
        sys.executable, str(ROOT / "bench" / "load.py"), "--n", "4", "--tokens", "20",
        "--interval", "0.01", "--clients", "mixed", "--database", database,
        "--redis", "embedded", "--timeout", "60", "--json", str(out), "--mcp-calls", "2",
        "--client-processes", "2",
    ]  # fmt: skip

    finished = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=110, check=False
    )

    assert finished.returncode == 0, finished.stdout + finished.stderr
    result = json.loads(out.read_text())
    total = result["total"]
    assert total["completed"] == total["clients"] == 4
    assert total["delivered"] == total["sent"] == 4 * 20
    assert total["lost"] == total["duplicates"] == total["reordered"] == 0
    assert total["shown_wrong"] == total["stored_wrong"] == 0
    assert total["mcp_calls_answered"] == total["mcp_calls_expected"] == 4 * 2
    assert total["mcp_runs_wrong"] == 0
    assert sorted(result["by_transport"]) == ["sse", "ws"]
    assert result["code_from"].startswith(str(ROOT))
    assert result["peak_mb"]["worker"] > 0 and result["peak_mb"]["daphne"] > 0
    assert "| 4 | mixed |" in finished.stdout
