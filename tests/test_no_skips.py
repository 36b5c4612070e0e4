"""The suite cannot pass while skipping tests (the browser tests above all)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_sample.py").write_text(f"import pytest\n\n\n{body}")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "tests.no_skips",
               "-p", "no:cacheprovider", "-c", "/dev/null", "--rootdir", str(tmp_path),
               str(tmp_path / "test_sample.py")]  # fmt: skip
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_a_skipped_test_fails_the_run(tmp_path: Path) -> None:
    result = run(tmp_path, "def test_it():\n    pytest.skip('no Chromium here')\n")

    assert result.returncode == 1, result.stdout
    assert "1 test(s) skipped, which fails the run" in result.stdout


def test_a_run_without_skips_passes(tmp_path: Path) -> None:
    assert run(tmp_path, "def test_it():\n    assert True\n").returncode == 0
