"""How fast a run stops: from a cancel (or the time limit) to the run's end, and
to the provider connection being closed, during a slow stream and a slow tool.

Run: `.venv/bin/python bench/stop_latency.py` (part of `make bench`). Oracle's
engine talks through LiteLLM to the local fake server (agents/testing/
fake_server.py, in a thread of this process), which notes the moment each
client hangs up. Scenarios:

- stream: the model streams one chunk, then a dot every 20 ms, forever;
- tool: the model asks for a tool that sleeps for a minute.

`cancel` sets the run's CancelToken once the stream (or the tool) has started,
after a random 0-20 ms; `timeout` gives the run a time limit of 0.3 s and
counts from the moment it is reached. The time limit is set below the
settings' 10 s minimum with `dataclasses.replace`, for the benchmark only.
Reports p50/p99 (nearest rank) and max over --tries tries (100 by default).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.cancel import CancelToken  # noqa: E402
from agents.config import AgentConfig  # noqa: E402
from agents.events import Event, EventType  # noqa: E402
from agents.litellm_model import LiteLLMModel  # noqa: E402
from agents.loop import RunDeps, start_run  # noqa: E402
from agents.state import TerminationReason  # noqa: E402
from agents.testing.fake_server import FakeServer  # noqa: E402
from agents.tools import Tool, ToolRegistry  # noqa: E402
from agents.tree import DefaultDecisionTree  # noqa: E402

DEFAULT_JSON = ROOT / "var" / "bench" / "stop_latency.json"
TIME_LIMIT = 0.3
SCENARIOS = (("stream", "cancel"), ("stream", "timeout"), ("tool", "cancel"), ("tool", "timeout"))


async def slow_tool() -> str:
    """Take a minute."""
    await asyncio.sleep(60)
    return "done"


def script(kind: str) -> list[dict[str, Any]]:
    if kind == "stream":
        return [{"text": ["Thinking"], "hang": True, "chunk_delay": 0.02}]
    return [{"tool_calls": [{"id": "call_0", "name": "slow_tool", "arguments": {}}]}]


class NotStarted(Exception):
    """The time limit came before the slow part began (a loaded machine): try again."""


async def one_try(kind: str, cause: str, server: FakeServer) -> dict[str, float | None]:
    """Milliseconds from the stop to the run's end and to the hang-up (stream only)."""
    for _ in range(5):
        try:
            return await _one_try(kind, cause, server)
        except NotStarted:
            continue
    raise AssertionError(f"{kind}/{cause}: the slow part never began before the time limit")


async def _one_try(kind: str, cause: str, server: FakeServer) -> dict[str, float | None]:
    server.set_script(script(kind))
    server.disconnects.clear()
    started = asyncio.Event()
    wanted = EventType.ASSISTANT_DELTA if kind == "stream" else EventType.TOOL_CALL

    async def on_event(event: Event) -> None:
        if event["type"] == wanted:
            started.set()

    limit = TIME_LIMIT if cause == "timeout" else 600
    config = replace(AgentConfig(), timeout_seconds=limit)  # below the 10 s minimum: bench only
    deps = RunDeps(
        model=LiteLLMModel("openai/fake-model", api_base=server.base_url, api_key="bench"),
        tree=DefaultDecisionTree(config),
        tools=ToolRegistry([Tool.from_function(slow_tool)]),
        max_retries=0,
    )
    token = CancelToken()
    begun = time.monotonic()
    run = asyncio.ensure_future(start_run("Go.", deps, on_event=on_event, cancel=token))
    if cause == "cancel":
        await asyncio.wait_for(started.wait(), 10)
        await asyncio.sleep(random.uniform(0, 0.02))
        stop_at = time.monotonic()
        token.cancel()
    else:
        stop_at = begun + limit
    result = await asyncio.wait_for(run, 30)
    ended = time.monotonic()
    if not started.is_set():
        raise NotStarted
    expected = TerminationReason.CANCELLED if cause == "cancel" else TerminationReason.TIMEOUT
    if result.reason is not expected:
        raise AssertionError(f"{kind}/{cause}: the run ended with {result.reason}")
    closed_ms: float | None = None
    if kind == "stream":
        deadline = time.monotonic() + 5
        # The fake server notes hang-ups from its own thread: poll its list.
        while not server.disconnects and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.001)
        if not server.disconnects:
            return {"end_ms": (ended - stop_at) * 1000, "closed_ms": None, "not_closed": 1}
        closed_ms = (server.disconnects[0] - stop_at) * 1000
    return {"end_ms": (ended - stop_at) * 1000, "closed_ms": closed_ms, "not_closed": 0}


def nearest_rank(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    rank = math.ceil(percent / 100 * len(ordered))
    return ordered[max(rank, 1) - 1]


def summary(values: list[float | None]) -> dict[str, float] | None:
    got = [v for v in values if v is not None]
    if not got:
        return None
    return {
        "p50": nearest_rank(got, 50),
        "p99": nearest_rank(got, 99),
        "max": max(got),
    }


async def measure(tries: int, log: Any) -> list[dict[str, Any]]:
    rows = []
    with FakeServer() as server:
        await one_try("stream", "cancel", server)  # warm up LiteLLM
        for kind, cause in SCENARIOS:
            started = time.perf_counter()
            samples = [await one_try(kind, cause, server) for _ in range(tries)]
            rows.append(
                {
                    "scenario": f"slow {kind}",
                    "cause": cause,
                    "tries": tries,
                    "to_run_end_ms": summary([s["end_ms"] for s in samples]),
                    "to_connection_closed_ms": summary([s["closed_ms"] for s in samples]),
                    # Tries whose stream the fake server never saw closed within 5 s.
                    "not_closed": int(sum(s["not_closed"] or 0 for s in samples)),
                }
            )
            print(
                f"  {kind}/{cause}: {tries} tries in {time.perf_counter() - started:.1f} s",
                file=log,
                flush=True,
            )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    def cell(figures: dict[str, float] | None) -> str:
        if figures is None:
            return "n/a (no open stream)"
        return f"{figures['p50']:.1f} / {figures['p99']:.1f} / {figures['max']:.1f}"

    tries = rows[0]["tries"] if rows else 0
    out = [
        f"### Stop latency, ms: p50 / p99 / max over {tries} tries\n",
        "| during | stopped by | to the run's end | to the provider connection closed |",
        "|---|---|---|---|",
    ]
    for row in rows:
        closed = cell(row["to_connection_closed_ms"])
        if row["not_closed"]:
            closed += f" ({row['not_closed']} not closed within 5 s)"
        out.append(
            f"| {row['scenario']} | {row['cause']} | {cell(row['to_run_end_ms'])} | {closed} |"
        )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=100)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    rows = asyncio.run(measure(args.tries, sys.stderr))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rows": rows}, indent=2))
    print(markdown(rows))
    print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
