"""The compaction benchmark at four messages, so it does not rot (bench/context.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))  # imported as `context` in the test, not at collection


def test_it_measures_a_conversation_compacted_against_one_that_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import context

    out = tmp_path / "context.json"

    assert context.main(["--messages", "4", "--passes", "1", "--json", str(out)]) == 0

    result = json.loads(out.read_text())
    assert [turn["turn"] for turn in result["turns"]] == [1, 2, 3, 4]
    assert result["completed_small"] == result["completed_large"] == 4
    # Four 1,000-token messages outgrow 3,000 tokens: one refusal teaches the window,
    # then older turns are summarised; the large window never needs a compaction call.
    assert result["refused"] == 1 and result["failed"] == 0
    assert result["compaction_calls"] >= 1 and result["large_compaction_calls"] == 0
    first = result["turns"][0]
    assert first["tokens_small"] == first["tokens_large"] and first["compaction_calls"] == 0
    assert result["turns"][-1]["tokens_small"] < result["turns"][-1]["tokens_large"]
    assert all(turn["ms_small"] > 0 and turn["ms_large"] > 0 for turn in result["turns"])
    printed = capsys.readouterr().out
    assert "| turn | compaction calls | refused |" in printed and "tokens a turn:" in printed
