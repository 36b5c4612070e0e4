"""How well and how fast the no-progress detector (agents/progress.py) tells loops from work.

Run: `python bench/progress.py`. It reads the labelled traces in
`tests/agents/traces/*.jsonl` (written by `generate.py` there) and asks the
detector after every action, as the engine does, keeping only the last
`history_size` actions. A stuck trace is classified right when the run is stopped
at its last action; a productive one when it is never stopped. For comparison,
the rule the engine had before (the same tool and arguments `repeats` times in a
row, results ignored) is scored on the same set.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.progress import Action, find_cycle, history_size
from agents.tools import ToolResult

TRACES = Path(__file__).resolve().parents[1] / "tests" / "agents" / "traces"
PASSES = 7


def load_traces() -> list[dict[str, Any]]:
    lines = [line for path in sorted(TRACES.glob("*.jsonl")) for line in path.open()]
    return [json.loads(line) for line in lines]


def results(trace: dict[str, Any]) -> list[ToolResult]:
    return [ToolResult(f"call-{n}", **action) for n, action in enumerate(trace["actions"])]


def flagged_at(trace: dict[str, Any]) -> int | None:
    """The step after which the detector stops the run, or None."""
    repeats, recent = trace["repeats"], []
    for step, result in enumerate(results(trace), start=1):
        recent.append(Action.from_result(result))
        del recent[: -history_size(repeats)]
        if find_cycle(recent, repeats) is not None:
            return step
    return None


def flagged_at_before(trace: dict[str, Any]) -> int | None:
    """The same, by the previous rule: one call and its arguments `repeats` times in a row."""
    repeats, recent = trace["repeats"], []
    for step, result in enumerate(results(trace), start=1):
        recent.append(_call_key(result))
        del recent[:-repeats]
        if len(recent) == repeats and len(set(recent)) == 1:
            return step
    return None


def _call_key(result: ToolResult) -> str:
    return result.name + ":" + json.dumps(result.arguments, sort_keys=True, separators=(",", ":"))


def score(
    traces: list[dict[str, Any]], flagged: Callable[[dict[str, Any]], int | None]
) -> list[dict[str, Any]]:
    """The traces classified wrongly."""
    return [
        trace
        for trace in traces
        if flagged(trace) != (len(trace["actions"]) if trace["label"] == "stuck" else None)
    ]


def report(
    name: str, traces: list[dict[str, Any]], wrong: list[dict[str, Any]], *, ids: bool = True
) -> None:
    labels = Counter(trace["label"] for trace in traces)
    misses = Counter(trace["label"] for trace in wrong)
    print(f"{name}:")
    print(f"  accuracy             {1 - len(wrong) / len(traces):.4f}")
    print(
        f"  false-positive rate  {misses['productive'] / labels['productive']:.4f}"
        f" ({misses['productive']} of {labels['productive']} productive traces stopped)"
    )
    print(
        f"  false-negative rate  {misses['stuck'] / labels['stuck']:.4f}"
        f" ({misses['stuck']} of {labels['stuck']} stuck traces not stopped at their last action)"
    )
    if ids:
        print(f"  misclassified        {', '.join(trace['id'] for trace in wrong) or 'none'}")


def by_shape(traces: list[dict[str, Any]], *wrong: list[dict[str, Any]]) -> None:
    def count(some: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
        return Counter((trace["label"], trace["shape"]) for trace in some)

    shapes, missed = count(traces), [count(some) for some in wrong]
    print("\nby shape: traces, wrong with find_cycle, wrong with the rule before")
    for key, total in sorted(shapes.items()):
        label, shape = key
        print(f"  {label:<10} {shape:<18} {total:>3}", *(f"{m[key]:>3}" for m in missed))


def timing(traces: list[dict[str, Any]]) -> None:
    """Microseconds per `find_cycle` call and per `Action.from_result`, median of PASSES."""
    prepared = []
    for trace in traces:
        repeats, actions = trace["repeats"], [Action.from_result(r) for r in results(trace)]
        keep = history_size(repeats)
        prepared += [
            (actions[max(0, end - keep) : end], repeats) for end in range(1, len(actions) + 1)
        ]
    every_result = [result for trace in traces for result in results(trace)]
    cycle_us, action_us = [], []
    for _ in range(PASSES):
        started = time.perf_counter()
        for recent, repeats in prepared:
            find_cycle(recent, repeats)
        cycle_us.append((time.perf_counter() - started) / len(prepared) * 1e6)
        started = time.perf_counter()
        for result in every_result:
            Action.from_result(result)
        action_us.append((time.perf_counter() - started) / len(every_result) * 1e6)
    print(f"\ntime per call (median of {PASSES} passes over the {len(prepared)} steps of the set):")
    print(f"  find_cycle           {statistics.median(cycle_us):.2f} µs (best {min(cycle_us):.2f})")
    print(
        f"  Action.from_result   {statistics.median(action_us):.2f} µs (best {min(action_us):.2f})"
    )


def main() -> None:
    traces = load_traces()
    labels = Counter(trace["label"] for trace in traces)
    print(f"{len(traces)} traces: {labels['stuck']} stuck, {labels['productive']} productive\n")
    wrong = score(traces, flagged_at)
    wrong_before = score(traces, flagged_at_before)
    report("find_cycle (max_period 3, results compared)", traces, wrong)
    report("before (one call repeated, results ignored)", traces, wrong_before, ids=False)
    by_shape(traces, wrong, wrong_before)
    timing(traces)


if __name__ == "__main__":
    main()
