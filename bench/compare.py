"""Oracle's engine against the agent frameworks people use instead, on one task.

Run: `make bench` (or `.venv/bin/python bench/compare.py`). The task (bench/task.py):
a model asks for one no-op tool call per step for n steps, then answers.

Round `inproc`: each framework with its own in-process scripted model; the
figure is per-step overhead = (wall time - time inside the scripted model and
the tool) / n. Round `http`: each framework talks to the same local
OpenAI-compatible fake server (agents/testing/fake_server.py, served from this
process) through its own client, Oracle through LiteLLM; the figures are wall
time per step and the CPU time per step of the framework's own process (which a
busy machine moves far less). Two reference rows go with it: a bare httpx loop
(the floor) and a bare litellm.acompletion loop (LiteLLM's own cost, without
Oracle's engine).

Every framework runs in a fresh process: Oracle in this venv, the peers in
`.venv-bench` (openai-agents installs a package named `agents`, like Oracle's
engine). The frameworks take turns: each pass runs all of them in a rotated
order, and the samples of all passes are pooled, so a machine that slows down
for a while (other load, a noisy neighbour) does not fall on one framework.
Each run is checked: n tool calls in order, n + 1 model calls (counted by the
fake server over HTTP) and the final answer, so a misconfigured peer fails
instead of looking fast. Prints Markdown tables; writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(BENCH))

import task  # noqa: E402

from agents.testing.fake_server import FakeServer  # noqa: E402

PEERS = ("openai-agents", "pydantic-ai", "langgraph", "smolagents")
PEERS_PYTHON = ROOT / ".venv-bench" / "bin" / "python"
DEFAULT_JSON = ROOT / "var" / "bench" / "compare.json"
WORKER_TIMEOUT = 1_800


def machine() -> dict[str, Any]:
    """What the figures came from."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
        "load_average_at_start": [round(x, 2) for x in load],
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
    }


class WorkerFailed(RuntimeError):
    pass


def run_worker(python: Path | str, script: str, args: list[str]) -> list[dict[str, Any]]:
    """Run a worker script in its own process; its last stdout line is a JSON list of rows."""
    command = [str(python), str(BENCH / script), *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=WORKER_TIMEOUT, cwd=BENCH, check=False
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise WorkerFailed(f"{' '.join(command[1:])} failed:\n{tail}")
    rows: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return rows


def failed_row(framework: str, round_name: str, n: int, error: str) -> dict[str, Any]:
    return {"framework": framework, "round": round_name, "n": n, "error": error}


def run_round(
    round_name: str,
    sizes: list[int],
    runs: int,
    peers_python: Path | None,
    log: Any,
    *,
    rotate: int = 0,
) -> tuple[list[dict[str, Any]], list[str]]:
    """All frameworks through one round; returns rows and errors.

    `rotate` starts the list of frameworks that many places further on, so that
    over several passes none is always the one run first (or last).
    """
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    common = ["--n", *map(str, sizes), "--runs", str(runs)]
    jobs: list[tuple[str, Path | str, str, list[str]]] = []
    if round_name == "http":
        jobs.append(
            ("bare httpx loop (floor)", sys.executable, "run_oracle.py", ["--round", "floor"])
        )
        # LiteLLM alone on the route Oracle takes to a server of one's own, read to the end.
        litellm_args = ["--round", "litellm", "--model", "hosted_vllm/fake-model"]
        jobs.append(("bare litellm loop", sys.executable, "run_oracle.py", litellm_args))
    jobs.append(("oracle", sys.executable, "run_oracle.py", ["--round", round_name]))
    if peers_python is not None:
        jobs += [
            (peer, peers_python, "run_peers.py", ["--framework", peer, "--round", round_name])
            for peer in PEERS
        ]
    shift = rotate % len(jobs)
    jobs = jobs[shift:] + jobs[:shift]
    server = FakeServer().start() if round_name == "http" else None
    try:
        for name, python, script, args in jobs:
            extra = ["--base-url", server.base_url] if server is not None else []
            print(f"  {round_name}: {name} ...", file=log, flush=True)
            started = time.perf_counter()
            if server is not None:
                server.requests.clear()
            try:
                got = run_worker(python, script, [*args, *common, *extra])
                if server is not None:
                    _check_requests(name, server, sizes, runs)
            except (WorkerFailed, AssertionError, subprocess.TimeoutExpired) as error:
                errors.append(f"{name} ({round_name}): {error}")
                rows += [failed_row(name, round_name, n, str(error)[:200]) for n in sizes]
                continue
            finally:
                if server is not None:
                    server.requests.clear()
            rows += got
            print(f"    done in {time.perf_counter() - started:.1f} s", file=log, flush=True)
    finally:
        if server is not None:
            server.stop()
    return rows, errors


def _check_requests(name: str, server: FakeServer, sizes: list[int], runs: int) -> None:
    """Over HTTP, every run must have made exactly n + 1 model calls (one warm-up run each)."""
    expected = sum((runs + 1) * (n + 1) for n in sizes)
    if len(server.requests) != expected:
        raise AssertionError(
            f"{name}: the fake server got {len(server.requests)} requests, expected {expected}"
        )


# (round, figure, the row's key for its ratio to Oracle's, table title)
TABLES = (
    ("inproc", "overhead", "ratio_to_oracle", "In-process scripted model: overhead per step, ms"),
    ("http", "wall", "ratio_to_oracle", "Same local fake server over HTTP: wall time per step, ms"),
    (
        "http",
        "cpu",
        "cpu_ratio_to_oracle",
        "Same local fake server over HTTP: CPU time of the framework's process per step, ms",
    ),
)


def _figures(row: dict[str, Any], key: str) -> tuple[float, float, float]:
    """Median, min and max of one figure of a row."""
    if key == "cpu":
        samples = row["cpu_samples_ms"]
        return row["cpu_ms"], min(samples), max(samples)
    return row[f"{key}_ms"], row[f"{key}_min_ms"], row[f"{key}_max_ms"]


def add_ratios(rows: list[dict[str, Any]]) -> None:
    """Each row's figures against Oracle's at the same round and n (above 1: slower than Oracle)."""
    oracle = {
        (r["round"], r["n"]): r for r in rows if r["framework"] == "oracle" and "error" not in r
    }
    for row in rows:
        base = oracle.get((row["round"], row["n"]))
        for round_name, key, name, _ in TABLES:
            if round_name != row["round"]:
                continue
            if "error" in row or base is None or not _figures(base, key)[0]:
                row[name] = None
            else:
                row[name] = _figures(row, key)[0] / _figures(base, key)[0]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def markdown(rows: list[dict[str, Any]], runs: int, passes: int = 1) -> str:
    """In-process overhead per step; over HTTP, wall time and CPU time per step."""
    out: list[str] = []
    taken = f"{runs} runs in {passes} passes" if passes > 1 else f"{runs} runs"
    for round_name, key, ratio_key, title in TABLES:
        these = [r for r in rows if r["round"] == round_name]
        if not these:
            continue
        out.append(f"### {title} (median of {taken} [min-max])\n")
        sizes = sorted({r["n"] for r in these})
        out.append("| framework | version | " + " | ".join(f"n = {n}" for n in sizes) + " |")
        out.append("|---|---|" + "---|" * len(sizes))
        names = list(dict.fromkeys(r["framework"] for r in these))
        for name in names:
            cells = []
            version = ""
            for n in sizes:
                row = next((r for r in these if r["framework"] == name and r["n"] == n), None)
                if row is None:
                    cells.append("")
                elif "error" in row:
                    cells.append("failed")
                else:
                    version = row["version"]
                    ratio = row.get(ratio_key)
                    shown = f" (x{ratio:.2f})" if ratio is not None and name != "oracle" else ""
                    median, low, high = _figures(row, key)
                    cells.append(f"**{_ms(median)}**{shown} [{_ms(low)}-{_ms(high)}]")
            out.append(f"| {name} | {version} | " + " | ".join(cells) + " |")
        out.append("")
        out.append("(xr) = the row's median over Oracle's at the same n; above 1 is slower.\n")
    return "\n".join(out)


def standing(rows: list[dict[str, Any]]) -> str:
    """One line per round and n: where Oracle stands against each peer."""
    lines = []
    for row in rows:
        if row["framework"] not in PEERS:
            continue
        for ratio_key, what in (("ratio_to_oracle", ""), ("cpu_ratio_to_oracle", " in CPU")):
            ratio = row.get(ratio_key)
            if ratio is None:
                continue
            verdict = f"{ratio:.2f}x Oracle's" if ratio >= 1 else f"faster ({ratio:.2f}x Oracle's)"
            lines.append(f"- {row['round']} n={row['n']}{what}: {row['framework']} is {verdict}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument(
        "--runs", type=int, default=2, help="timed runs per n in each pass (after a warm-up)"
    )
    parser.add_argument(
        "--passes",
        type=int,
        default=3,
        help="times every framework is run in turn; their samples are pooled",
    )
    parser.add_argument(
        "--rounds", nargs="+", choices=("inproc", "http"), default=["inproc", "http"]
    )
    parser.add_argument(
        "--tiny", action="store_true", help="n = 3, 1 run in each of 2 passes: a smoke test"
    )
    parser.add_argument("--peers-python", type=Path, default=PEERS_PYTHON)
    parser.add_argument("--no-peers", action="store_true", help="Oracle's rows only")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write the JSON")
    args = parser.parse_args(argv)
    sizes, runs, passes = ([3], 1, 2) if args.tiny else (args.sizes, args.runs, args.passes)
    if runs < 1 or passes < 1 or min(sizes) < 1:
        parser.error("--runs, --passes and --sizes must be at least 1")
    peers_python: Path | None = args.peers_python
    if args.no_peers:
        peers_python = None
    elif peers_python is not None and not peers_python.exists():
        print(
            f"No peers: {peers_python} is missing (`make bench` creates it). Oracle's rows only.",
            file=sys.stderr,
        )
        peers_python = None
    info = machine()
    print(
        f"Machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}", file=sys.stderr
    )
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    started = time.perf_counter()
    for number in range(passes):
        print(f"pass {number + 1} of {passes}", file=sys.stderr, flush=True)
        for round_name in args.rounds:
            got, failed = run_round(
                round_name, sizes, runs, peers_python, sys.stderr, rotate=number
            )
            rows += got
            errors += failed
    rows = task.pool(rows)
    add_ratios(rows)
    result = {
        "machine": info,
        "sizes": sizes,
        "runs": runs * passes,
        "passes": passes,
        "seconds": round(time.perf_counter() - started, 1),
        "peers": peers_python is not None,
        "rows": rows,
        "errors": errors,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2))
    print(markdown(rows, runs * passes, passes))
    print(standing(rows))
    print(f"\nJSON: {args.json} ({result['seconds']} s)")
    for error in errors:
        print(f"\nFAILED: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
