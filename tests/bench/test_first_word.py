"""The first-word script with two runs, so it does not rot (bench/first_word.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]


def test_it_times_the_first_run_apart_from_the_next(tmp_path: Path) -> None:
    out = tmp_path / "first_word.json"
    database = "postgres" if "postgresql" in settings.DATABASES["default"]["ENGINE"] else "sqlite"
    command = [
        sys.executable, str(ROOT / "bench" / "first_word.py"), "--runs", "2",
        "--database", database, "--json", str(out),
    ]  # fmt: skip

    finished = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=110, check=False
    )

    assert finished.returncode == 0, finished.stdout + finished.stderr
    result = json.loads(out.read_text())
    assert len(result["runs"]) == 2
    for run in result["runs"]:
        assert 0 < run["post_ms"] <= run["first_event_ms"] <= run["first_word_ms"]
    assert result["first_run_ms"] == round(result["runs"][0]["first_word_ms"], 1)
    assert "first run after the start" in finished.stdout
