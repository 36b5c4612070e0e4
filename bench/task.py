"""The benchmark task every framework runs, and the bookkeeping they share.

The task: a model that asks for one no-op tool call per step (with new
arguments each step) for `n` steps, then answers `FINAL_ANSWER`. Standard
library only, so both the project's venv and `.venv-bench` can import it.
"""

from __future__ import annotations

import json
import statistics
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from typing import Any

TOOL_NAME = "noop"
FINAL_ANSWER = "All steps done."
QUESTION = "Run the benchmark."
SYSTEM_PROMPT = "You are a benchmark agent. Call the tool when asked."
# Small fixed usage per call, so no token budget or warning enters the picture.
USAGE = {"prompt_tokens": 50, "completion_tokens": 10}


def step_arguments(step: int) -> dict[str, int]:
    """Arguments of the tool call at `step` (new each step, so no framework sees a loop)."""
    return {"step": step}


def server_script(n: int, *, final_tool: str | None = None) -> list[dict[str, Any]]:
    """The fake server's responses for one run: n tool calls, then the answer.

    `final_tool` gives the answer as a call of that tool, for frameworks that
    answer that way (smolagents' `final_answer`).
    """
    responses: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"id": f"call_{step}", "name": TOOL_NAME, "arguments": step_arguments(step)}
            ],
            "usage": dict(USAGE),
        }
        for step in range(n)
    ]
    if final_tool is None:
        responses.append({"text": FINAL_ANSWER, "usage": dict(USAGE)})
    else:
        call = {"id": f"call_{n}", "name": final_tool, "arguments": {"answer": FINAL_ANSWER}}
        responses.append({"tool_calls": [call], "usage": dict(USAGE)})
    return responses


def load_script(base_url: str, n: int, *, final_tool: str | None = None) -> None:
    """Give the fake server the script of one run (outside the timed part)."""
    root = base_url.removesuffix("/v1")
    body = json.dumps({"responses": server_script(n, final_tool=final_tool)}).encode()
    request = urllib.request.Request(
        f"{root}/_control/script", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


@dataclass
class Meter:
    """Time spent inside the scripted model and the tool, and what they were asked."""

    model_seconds: float = 0.0
    tool_seconds: float = 0.0
    model_calls: int = 0
    tool_calls: int = 0
    steps_seen: list[int] = field(default_factory=list)

    def tool(self, step: int) -> str:
        """The no-op tool's body: note the call and return at once."""
        started = time.perf_counter()
        self.tool_calls += 1
        self.steps_seen.append(step)
        result = "ok"
        self.tool_seconds += time.perf_counter() - started
        return result


@dataclass
class Sample:
    """One timed run."""

    wall: float
    inside: float  # seconds in the scripted model and the tool (0 over HTTP)
    cpu: float = 0.0  # CPU seconds of the framework's process (all its threads)


class Stopwatch:
    """Wall time and the process's CPU time from its creation to `stop()`.

    CPU time counts only what the framework's own process worked (every thread of
    it), not the fake server's work nor time the machine gave to others, so it
    moves far less than wall time on a shared machine.
    """

    def __init__(self) -> None:
        self._wall = time.perf_counter()
        self._cpu = time.process_time()

    def stop(self) -> tuple[float, float]:
        """Seconds of wall time and of CPU time so far."""
        return time.perf_counter() - self._wall, time.process_time() - self._cpu


def check_run(name: str, n: int, meter: Meter, answer: str, *, model_calls: int | None) -> None:
    """Fail loudly unless the run really made n tool calls and gave the final answer."""
    if meter.tool_calls != n or meter.steps_seen != list(range(n)):
        raise AssertionError(f"{name}: {meter.tool_calls} tool calls, expected {n} in order")
    if model_calls is not None and meter.model_calls != model_calls:
        raise AssertionError(f"{name}: {meter.model_calls} model calls, expected {model_calls}")
    if FINAL_ANSWER not in (answer or ""):
        raise AssertionError(f"{name}: final answer {answer!r}, expected {FINAL_ANSWER!r}")


@dataclass
class Row:
    """Figures of one framework at one n in one round; times in ms per step."""

    framework: str
    version: str
    round: str
    n: int
    runs: int
    wall_ms: float
    wall_min_ms: float
    wall_max_ms: float
    overhead_ms: float | None
    overhead_min_ms: float | None
    overhead_max_ms: float | None
    note: str = ""
    wall_samples_ms: list[float] = field(default_factory=list)
    overhead_samples_ms: list[float] | None = None
    cpu_ms: float = 0.0
    cpu_samples_ms: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarise(
    framework: str,
    version: str,
    round_name: str,
    n: int,
    samples: list[Sample],
    *,
    with_overhead: bool,
    note: str = "",
) -> Row:
    """Median, min and max per step of the samples."""
    walls = [s.wall / n * 1000 for s in samples]
    overheads = [(s.wall - s.inside) / n * 1000 for s in samples] if with_overhead else None
    cpus = [s.cpu / n * 1000 for s in samples]
    return _row(framework, version, round_name, n, walls, overheads, cpus, note)


def _row(
    framework: str,
    version: str,
    round_name: str,
    n: int,
    walls: list[float],
    overheads: list[float] | None,
    cpus: list[float],
    note: str,
) -> Row:
    return Row(
        framework=framework,
        version=version,
        round=round_name,
        n=n,
        runs=len(walls),
        wall_ms=statistics.median(walls),
        wall_min_ms=min(walls),
        wall_max_ms=max(walls),
        overhead_ms=statistics.median(overheads) if overheads else None,
        overhead_min_ms=min(overheads) if overheads else None,
        overhead_max_ms=max(overheads) if overheads else None,
        note=note,
        wall_samples_ms=walls,
        overhead_samples_ms=overheads,
        cpu_ms=statistics.median(cpus),
        cpu_samples_ms=cpus,
    )


def pool(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of the same framework, round and n from several passes, as one row each.

    The samples of every pass go together, and median, min and max are taken again
    over all of them; the first pass's order of rows is kept.
    """
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["framework"], row["round"], row["n"]), []).append(row)
    pooled = []
    for (framework, round_name, n), group in groups.items():
        if any("error" in row for row in group):
            pooled.append(next(row for row in group if "error" in row))
            continue
        walls = [ms for row in group for ms in row["wall_samples_ms"]]
        with_overhead = group[0]["overhead_samples_ms"] is not None
        overheads = (
            [ms for row in group for ms in row["overhead_samples_ms"]] if with_overhead else None
        )
        cpus = [ms for row in group for ms in row["cpu_samples_ms"]]
        first = group[0]
        version, note = first["version"], first["note"]
        row = _row(framework, version, round_name, n, walls, overheads, cpus, note)
        pooled.append(row.to_dict())
    return pooled
