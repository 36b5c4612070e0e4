"""The context window in the limit log: each request shortened to fit a model's window
(`context.compacted`) and each one a provider refused as too long (`context.refused`) is
one JSON line, with the model, the window and the tokens, like every limit event."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest

from ops import limit_log
from tests.ops.test_limit_log import Lines, alices_run, recorder_of

SUMMARY = "The user asked about owls; the Oracle found three papers on their migration."
COMPACTED = {
    "type": "context.compacted",
    "model": "openai/gpt-4o-mini",
    "window": 8192,
    "before": 31_400,
    "after": 5_200,
    "summarised": True,
    "stubbed": 3,
    "cut": 0,
    "summary": SUMMARY,
    "covers": 12,
    "text": "Earlier messages were summarised to fit the model's 8,192-token context "
    "(31,400 → 5,200 tokens). The conversation itself is kept whole.",
}
REFUSED = {
    "type": "context.refused",
    "model": "openai/gpt-4o-mini",
    "window": 8192,
    "requested": 9_300,
    "ratio": 1.1,
    "status": 400,
}
USED = {"type": "context.used", "prompt_tokens": 5_200, "window": 8192}


@pytest.fixture
def lines(monkeypatch: pytest.MonkeyPatch) -> Lines:
    """What the limit log writes, parsed, through the formatter settings configure."""
    logger = logging.getLogger("oracle.limits")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.handlers[0].formatter)
    monkeypatch.setattr(logger, "handlers", [handler])
    return lambda: [json.loads(line) for line in stream.getvalue().splitlines()]


async def test_each_compaction_and_refusal_is_a_line_and_each_calls_size_is_not(
    lines: Lines,
) -> None:
    run = alices_run()
    recorder = recorder_of(run)
    stream: list[dict[str, Any]] = [
        {"type": "run.started", "run_id": str(run.pk), "model": "openai/gpt-4o-mini"},
        USED,
        REFUSED,
        COMPACTED,
        USED,
        {**COMPACTED, "summarised": False, "stubbed": 2, "cut": 1, "summary": ""},
        {"type": "assistant.message", "text": "Owls fly south.", "final": True},
        {"type": "run.finished", "reason": "completed", "iterations": 2},
    ]

    for event in stream:
        await recorder(dict(event))

    logged = lines()
    assert [(line["event"], line["seq"]) for line in logged] == [
        ("context.refused", 3),
        ("context.compacted", 4),
        ("context.compacted", 6),
        ("run.finished", 8),
    ]
    refused, summarised, shortened = logged[:3]
    assert {key: refused[key] for key in ("model", "window", "requested", "ratio", "status")} == {
        "model": "openai/gpt-4o-mini",
        "window": 8192,
        "requested": 9_300,
        "ratio": 1.1,
        "status": 400,
    }
    figures = ("model", "window", "before", "after", "summarised", "stubbed", "cut")
    assert {key: summarised[key] for key in figures} == {
        "model": "openai/gpt-4o-mini",
        "window": 8192,
        "before": 31_400,
        "after": 5_200,
        "summarised": True,
        "stubbed": 3,
        "cut": 0,
    }
    assert (shortened["summarised"], shortened["stubbed"], shortened["cut"]) == (False, 2, 1)
    for line in logged[:3]:
        assert line["run_id"] == str(run.pk)
        assert line["user"] == {"id": 7, "username": "alice"}
        assert (line["agent_type"], line["skill"], line["reason"]) == (
            "oracle",
            "deep_research",
            None,
        )
        assert set(line["counters"]) == {
            *("iterations", "tool_calls", "tokens", "cost_usd", "elapsed_s"),
        }
        assert "timestamp" in line


def test_a_line_never_carries_the_summary_nor_the_notices_text() -> None:
    line = limit_log.build_line(alices_run(), {**COMPACTED, "seq": 4}, {})

    assert line is not None
    assert "summary" not in line and "text" not in line and "covers" not in line
    assert SUMMARY not in str(line)


async def test_the_lines_message_says_the_model_the_tokens_and_the_kind(lines: Lines) -> None:
    recorder = recorder_of(alices_run())

    for event in (REFUSED, COMPACTED, {**COMPACTED, "summarised": False}):
        await recorder(dict(event))

    assert [line["message"] for line in lines()] == [
        "context.refused oracle openai/gpt-4o-mini 9300/8192",
        "context.compacted oracle openai/gpt-4o-mini 31400→5200/8192 summarised",
        "context.compacted oracle openai/gpt-4o-mini 31400→5200/8192 shortened",
    ]
