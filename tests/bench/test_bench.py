"""The benchmarks run at tiny sizes, so they do not rot (bench/README.md).

Oracle's rows always run. The peers run when `make bench` has created
.venv-bench; without it the test says so in a warning rather than skip.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
# The scripts import as `compare` and `stop_latency`: in the tests, not at collection,
# where LiteLLM's import (stop_latency's) would cost every xdist worker.
sys.path.insert(0, str(BENCH))


def rows_by_name(result: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(row["round"], row["framework"]): row for row in result["rows"]}


def test_it_compares_oracle_and_the_peers_at_tiny_n(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import compare

    out = tmp_path / "compare.json"
    peers = compare.PEERS_PYTHON.exists()
    args = ["--tiny", "--json", str(out)] + ([] if peers else ["--no-peers"])

    code = compare.main(args)

    result = json.loads(out.read_text())
    assert result["errors"] == [], result["errors"]
    assert code == 0
    rows = rows_by_name(result)
    expected = [("inproc", "oracle"), ("http", "oracle")]
    expected += [("http", "bare httpx loop (floor)"), ("http", "bare litellm loop")]
    if peers:
        expected += [(r, peer) for r in ("inproc", "http") for peer in compare.PEERS]
    else:
        warnings.warn(
            "bench: .venv-bench is missing, so only Oracle's rows ran; "
            "`make bench` installs the peer frameworks.",
            stacklevel=1,
        )
    for key in expected:
        assert key in rows, f"no row for {key}"
        assert rows[key]["wall_ms"] > 0
        # One run in each of two passes, pooled into one row per framework.
        assert rows[key]["runs"] == 2 and len(rows[key]["wall_samples_ms"]) == 2
        assert rows[key]["cpu_ms"] > 0
    assert len(result["rows"]) == len(expected)
    assert rows[("inproc", "oracle")]["overhead_ms"] > 0
    printed = capsys.readouterr().out
    assert "| oracle |" in printed and "overhead per step" in printed
    assert "CPU time of the framework's process per step" in printed


def test_it_measures_stop_latency_with_a_few_tries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import stop_latency

    out = tmp_path / "stop.json"

    assert stop_latency.main(["--tries", "2", "--json", str(out)]) == 0

    rows = json.loads(out.read_text())["rows"]
    assert [(r["scenario"], r["cause"]) for r in rows] == [
        ("slow stream", "cancel"),
        ("slow stream", "timeout"),
        ("slow tool", "cancel"),
        ("slow tool", "timeout"),
    ]
    for row in rows:
        # Within 1 second, as SPEC section 3 promises; usually a few milliseconds.
        assert row["to_run_end_ms"]["max"] < 1000
    assert all(r["to_connection_closed_ms"]["max"] < 1000 for r in rows[:2])
    assert "Stop latency" in capsys.readouterr().out
