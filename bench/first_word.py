"""First word, one user: from the post of a message to its answer's first word on the SSE.

    .venv/bin/python bench/first_word.py [--runs 12] [--interval 0] [--database sqlite]
        [--redis embedded] [--json FILE]

Starts `manage.py serve` and the fake provider as `load.py` does (a fresh database,
the provider in a process of its own, answering at once with `--interval 0`), then
asks `--runs` questions one after another, each in a new conversation, and reads each
answer's events on the run's SSE. The first run after the start is shown apart from
the others: it is what the first user after a restart waits. Prints, for each run,
the post's answer, the first event and the first word (ms after the post was sent),
then the first run's first word and the median and highest of the rest.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # bench/ is not a package: its folder is on the path above


def one_run(http: httpx.Client) -> dict[str, float]:
    conversation = http.post("/api/conversations/", json={})
    conversation.raise_for_status()
    began = time.perf_counter()
    posted = http.post(
        f"/api/conversations/{conversation.json()['id']}/messages/",
        json={"content": "First word, please."},
    )
    posted.raise_for_status()
    figures = {"post_ms": 1000 * (time.perf_counter() - began)}
    with http.stream("GET", f"/api/runs/{posted.json()['run_id']}/events/") as events:
        for line in events.iter_lines():
            if not line.startswith("event: "):
                continue
            since = 1000 * (time.perf_counter() - began)
            figures.setdefault("first_event_ms", since)
            if line == "event: assistant.delta":
                figures.setdefault("first_word_ms", since)
    if "first_word_ms" not in figures:
        raise RuntimeError(f"a run ended with no word: {figures}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=12, help="questions, one after another")
    parser.add_argument("--interval", type=float, default=0.0, help="the provider's s a word")
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--redis", choices=("embedded", "system"), default="embedded")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.runs < 2 or args.interval < 0:
        parser.error("--runs must be at least 2 and --interval 0 or more")
    stack_args = load.parse(
        ["--n", "1", "--tokens", "5", "--interval", str(args.interval),
         "--database", args.database, "--redis", args.redis]
    )  # fmt: skip
    with load.running_stack(stack_args) as stack:
        token = load.create_users(stack, 1)[0]
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=stack.url, headers=headers, trust_env=False, timeout=60) as http:
            runs = []
            for _ in range(args.runs):
                runs.append(one_run(http))
                time.sleep(0.3)  # one user: the next question after the answer was read
    report(runs, args)
    return 0


def report(runs: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print("| run | post answered ms | first event ms | first word ms |")
    print("|---|---|---|---|")
    for number, run in enumerate(runs, 1):
        print(
            f"| {number} | {run['post_ms']:.1f} | {run['first_event_ms']:.1f} "
            f"| {run['first_word_ms']:.1f} |"
        )
    rest = [run["first_word_ms"] for run in runs[1:]]
    summary = {
        "first_run_ms": round(runs[0]["first_word_ms"], 1),
        "rest_median_ms": round(statistics.median(rest), 1),
        "rest_max_ms": round(max(rest), 1),
    }
    print(
        f"\nfirst word ({args.database}, provider {args.interval} s a word): first run after "
        f"the start {summary['first_run_ms']} ms; the next {len(rest)}: median "
        f"{summary['rest_median_ms']} ms, highest {summary['rest_max_ms']} ms"
    )
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, **summary}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
