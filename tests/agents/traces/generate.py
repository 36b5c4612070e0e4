"""Write the labelled tool-call traces the no-progress detector is measured on.

Run: `python tests/agents/traces/generate.py`. It rewrites `stuck.jsonl` and
`productive.jsonl` next to it; they are committed, so the set only changes when
this script does (it is seeded, and each tool's result depends only on its
arguments unless a shape says otherwise).

Each line is one run: {"id", "label", "shape", "repeats", "actions"}, each action
{"name", "arguments", "ok", "content"} as a `ToolResult` has them. The label is
what `agents.progress` must say when the detector is asked after every action,
as the engine asks it, with the default max_period of 3:

- stuck: after the last action, and not before, the latest calls repeat one
  call or a cycle of 2 or 3 calls `repeats` times with equal arguments (in any
  key order) and equal results, errors included;
- productive: that never happens. Paging moves its arguments on, polling and
  retries see new results. A cycle of 4 calls is labelled productive on
  purpose: it is beyond max_period, so the detector leaves it to the tool-call
  budget, and those traces check that it keeps to that contract.

Before writing, every trace is checked against a brute-force reading of these
rules, so a shape whose actions do not say what its label says fails here.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

SEED = 20261122
MAX_PERIOD = 3
HERE = Path(__file__).resolve().parent

Action = dict[str, Any]

TOPICS = [
    "owl migration", "tidal energy", "roman aqueducts", "battery recycling",
    "coral bleaching", "jazz history", "sourdough starters", "volcanic soils",
    "solar sails", "medieval trade routes", "honeybee decline", "glacier retreat",
    "printing press", "quantum dots", "urban heat islands", "silk road",
    "antibiotic resistance", "deep sea vents", "wind turbine noise", "ancient dyes",
    "lithium mining", "monsoon forecasting", "bird song dialects", "rust belt towns",
    "paper wasps", "fusion reactors", "sleep and memory", "tea trade", "sea otters",
    "perovskite cells", "viking ships", "river deltas", "mycorrhizal networks",
    "steam locomotives", "dark matter maps", "kelp forests", "byzantine coins",
    "desert locusts", "vaccine cold chains", "carbon capture",
]  # fmt: skip
REPORT_WORDS = ["the", "of", "survey", "data", "shows", "a", "marked", "rise", "in", "levels"]
PAGE_WORDS = ["report", "annual", "figures", "energy", "grid", "water", "policy"]
SITES = ["example.org", "docs.example.com", "news.example.net", "wiki.example.edu"]
FOLDERS = ["/data/reports", "/home/ana/notes", "/srv/exports", "/projects/atlas/docs"]
ERRORS = [
    "Error: HTTP 503 Service Unavailable",
    "Error: connection timed out after 10 s",
    "Error: HTTP 429 Too Many Requests",
    "Error: certificate verify failed",
]


def _stable(*parts: object) -> random.Random:
    """A generator seeded by the arguments: the same call always gets the same result."""
    return random.Random("|".join(map(str, parts)))


def call(name: str, arguments: dict[str, Any], content: str, ok: bool = True) -> Action:
    return {"name": name, "arguments": arguments, "ok": ok, "content": content}


# --- the tools: results as a small deterministic world gives them ---------------------


def doc_ids(query: str) -> list[str]:
    return [f"doc-{n}" for n in _stable("docs", query).sample(range(1000, 9999), 3)]


def search(query: str, **extra: Any) -> Action:
    found = "; ".join(
        f'{doc} "{query.title()} {part}" ({score:.2f})'
        for doc, part, score in zip(
            doc_ids(query), ("overview", "field notes", "review"), (0.91, 0.78, 0.64), strict=True
        )
    )
    return call("search_documents", {"query": query, **extra}, f"3 results: {found}")


def read(doc_id: str, page: int | None = None) -> Action:
    words = _stable("read", doc_id, page).choices(REPORT_WORDS, k=16)
    arguments: dict[str, Any] = (
        {"doc_id": doc_id} if page is None else {"doc_id": doc_id, "page": page}
    )
    where = f"page {page} of 9" if page is not None else "page 1 of 9"
    return call("read_document", arguments, f"{doc_id}, {where}: {' '.join(words)}.")


def calculate(a: int, b: int, op: str) -> Action:
    value = {"*": a * b, "+": a + b, "-": a - b}[op]
    return call("calculator", {"expression": f"{a}{op}{b}"}, str(value))


def fetch(url: str, error: str | None = None) -> Action:
    if error is not None:
        return call("fetch_page", {"url": url}, error, ok=False)
    words = _stable("page", url).choices(PAGE_WORDS, k=12)
    return call("fetch_page", {"url": url}, f"Title: {url.rsplit('/', 1)[-1]}\n{' '.join(words)}")


def listing(path: str, first: int, count: int, total: int) -> str:
    last = min(first + count, total) - 1
    return f"{path}: files {first}-{last} of {total}: file_{first:04d}.csv ... file_{last:04d}.csv"


def check_job(job_id: str, status: str) -> Action:
    return call("check_job", {"job_id": job_id}, f"job {job_id}: {status}")


def clock(timezone: str, second: int) -> Action:
    return call(
        "current_time",
        {"timezone": timezone},
        f"2026-11-22T10:{second // 60:02d}:{second % 60:02d} {timezone}",
    )


# --- building blocks --------------------------------------------------------------------


class Pool:
    """Hands out calls no other part of the same trace makes, so cycles happen only by design."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.topics = rng.sample(TOPICS, len(TOPICS))

    def topic(self) -> str:
        if not self.topics:  # a long trace has used every topic: ask about them again, in 2025
            self.topics = [f"{topic} in 2025" for topic in TOPICS if "2025" not in topic]
        return self.topics.pop()

    def fresh(self) -> Action:
        """One call of any kind, on a topic or document nothing else in the trace uses."""
        kind = self.rng.choice(["search", "read", "calculator", "fetch"])
        if kind == "search":
            return search(self.topic())
        if kind == "read":
            return read(f"doc-{self.rng.randrange(10000, 99999)}")
        if kind == "calculator":
            return calculate(
                self.rng.randrange(2, 999), self.rng.randrange(2, 999), self.rng.choice("*+-")
            )
        return fetch(f"https://{self.rng.choice(SITES)}/{self.topic().replace(' ', '-')}")

    def research(self, steps: int) -> list[Action]:
        """Searches, reads of what they found, sums: `steps` calls, all different."""
        actions: list[Action] = []
        while len(actions) < steps:
            query = self.topic()
            actions.append(search(query))
            for doc in doc_ids(query)[: self.rng.randint(1, 2)]:
                actions.append(read(doc))
            if self.rng.random() < 0.4:
                actions.append(
                    calculate(self.rng.randrange(2, 999), self.rng.randrange(2, 99), "*")
                )
        return actions[:steps]

    def cycle(self, period: int) -> list[Action]:
        """`period` different calls a model might take turns with: search, read, sum, others."""
        query = self.topic()
        members = [
            search(query),
            read(doc_ids(query)[0]),
            calculate(self.rng.randrange(2, 99), 12, "*"),
        ]
        return (
            members[:period] if period <= 3 else members + [self.fresh() for _ in range(period - 3)]
        )


def reordered(arguments: dict[str, Any]) -> dict[str, Any]:
    """The same arguments with every key order reversed, nested ones included."""
    return {
        key: reordered(value) if isinstance(value, dict) else value
        for key, value in reversed(arguments.items())
    }


# --- stuck shapes ---------------------------------------------------------------------


def identical(pool: Pool, repeats: int) -> list[Action]:
    return [pool.fresh()] * repeats


def prefix_identical(pool: Pool, repeats: int) -> list[Action]:
    return pool.research(pool.rng.randint(3, 15)) + identical(pool, repeats)


def cycle2(pool: Pool, repeats: int) -> list[Action]:
    return pool.cycle(2) * repeats


def prefix_cycle2(pool: Pool, repeats: int) -> list[Action]:
    return pool.research(pool.rng.randint(3, 15)) + cycle2(pool, repeats)


def cycle3(pool: Pool, repeats: int) -> list[Action]:
    return pool.cycle(3) * repeats


def prefix_cycle3(pool: Pool, repeats: int) -> list[Action]:
    return pool.research(pool.rng.randint(3, 15)) + cycle3(pool, repeats)


def failing(pool: Pool, repeats: int) -> list[Action]:
    rng = pool.rng
    retried = rng.choice(
        [
            fetch(
                f"https://{rng.choice(SITES)}/{pool.topic().replace(' ', '-')}", rng.choice(ERRORS)
            ),
            call("read_document", {"doc_id": "doc-0000"}, "Error: no document doc-0000", ok=False),
            call(
                "calculator",
                {"expression": "2x+1"},
                "Error: not an arithmetic expression: '2x+1'",
                ok=False,
            ),
            call("list_files", {"path": "/root"}, "Error: permission denied: /root", ok=False),
        ]
    )
    return pool.research(rng.randint(0, 6)) + [retried] * repeats


def failing_cycle2(pool: Pool, repeats: int) -> list[Action]:
    error = pool.rng.choice(ERRORS)
    pair = [
        fetch(f"https://{site}/{pool.topic().replace(' ', '-')}", error)
        for site in pool.rng.sample(SITES, 2)
    ]
    return pair * repeats


def key_order(pool: Pool, repeats: int) -> list[Action]:
    """Equal calls whose arguments come in another key order every other time."""
    query = pool.topic()
    filtered = search(query, filters={"year": 2024, "lang": "en", "source": "journals"}, limit=5)
    period = pool.rng.choice([1, 2])
    cycle = [filtered] if period == 1 else [filtered, read(doc_ids(query)[0], page=2)]
    actions = []
    for turn in range(repeats):
        for action in cycle:
            arguments = reordered(action["arguments"]) if turn % 2 else action["arguments"]
            actions.append({**action, "arguments": arguments})
    return actions


def near_miss_paging(pool: Pool, repeats: int) -> list[Action]:
    """Going back and forth between two pages that say the same each time."""
    path = pool.rng.choice(FOLDERS)
    if pool.rng.random() < 0.5:
        pages = [
            call(
                "list_files",
                {"path": path, "offset": offset, "limit": 50},
                listing(path, offset, 50, 120),
            )
            for offset in (0, 50)
        ]
    else:
        doc = f"doc-{pool.rng.randrange(1000, 9999)}"
        pages = [read(doc, page=1), read(doc, page=2)]
    return pool.research(pool.rng.randint(0, 5)) + pages * repeats


def polling_stalled(pool: Pool, repeats: int) -> list[Action]:
    """A job polled until its status stops changing, then polled the same `repeats` times."""
    job = f"job-{pool.rng.randrange(100, 999)}"
    moving = [
        check_job(job, f"running, {percent}% done")
        for percent in range(10, 10 * pool.rng.randint(1, 5), 10)
    ]
    return moving + [check_job(job, "running, 60% done")] * repeats


# --- productive shapes ----------------------------------------------------------------


def paging_offset(pool: Pool, repeats: int) -> list[Action]:
    path, total = pool.rng.choice(FOLDERS), pool.rng.randrange(200, 600)
    return [
        call(
            "list_files",
            {"path": path, "offset": offset, "limit": 50},
            listing(path, offset, 50, total),
        )
        for offset in range(0, total, 50)
    ]


def paging_page(pool: Pool, repeats: int) -> list[Action]:
    doc = f"doc-{pool.rng.randrange(1000, 9999)}"
    return pool.research(pool.rng.randint(0, 4)) + [
        read(doc, page=page) for page in range(1, pool.rng.randint(repeats + 1, 10))
    ]


def paging_cursor(pool: Pool, repeats: int) -> list[Action]:
    """Each page names the cursor of the next one."""
    path, actions, cursor = pool.rng.choice(FOLDERS), [], None
    for first in range(0, 50 * pool.rng.randint(repeats + 1, 9), 50):
        following = f"{_stable(path, first).getrandbits(40):010x}"
        arguments: dict[str, Any] = (
            {"path": path} if cursor is None else {"path": path, "cursor": cursor}
        )
        actions.append(
            call(
                "list_files",
                arguments,
                f"{listing(path, first, 50, 1000)}; next cursor: {following}",
            )
        )
        cursor = following
    return actions


def polling(pool: Pool, repeats: int) -> list[Action]:
    """The same call, seeing something new every time: a job's progress, or the clock."""
    if pool.rng.random() < 0.6:
        job = f"job-{pool.rng.randrange(100, 999)}"
        steps = sorted(pool.rng.sample(range(5, 100), pool.rng.randint(repeats + 1, 8)))
        return [check_job(job, f"running, {percent}% done") for percent in steps] + [
            check_job(job, "done, 1,204 rows written")
        ]
    zone = pool.rng.choice(["Europe/Paris", "UTC", "Asia/Tokyo", "America/Lima"])
    seconds = sorted(pool.rng.sample(range(3600), pool.rng.randint(repeats + 1, 7)))
    return pool.research(pool.rng.randint(0, 4)) + [clock(zone, second) for second in seconds]


def polling_finishes(pool: Pool, repeats: int) -> list[Action]:
    """The same status just under the threshold, then the job is done."""
    job = f"job-{pool.rng.randrange(100, 999)}"
    return [check_job(job, "running, 80% done")] * (repeats - 1) + [
        check_job(job, "done, 88 rows written")
    ]


def retry(pool: Pool, repeats: int) -> list[Action]:
    """A failing call retried, the same way, until it works: the success is new."""
    url = f"https://{pool.rng.choice(SITES)}/{pool.topic().replace(' ', '-')}"
    failures = [fetch(url, pool.rng.choice(ERRORS))] * pool.rng.randint(1, repeats - 1)
    return (
        pool.research(pool.rng.randint(0, 4))
        + failures
        + [fetch(url)]
        + pool.research(pool.rng.randint(0, 4))
    )


def research(pool: Pool, repeats: int) -> list[Action]:
    return pool.research(pool.rng.randint(10, 30))


def same_tool(pool: Pool, repeats: int) -> list[Action]:
    """One tool again and again, with other arguments each time."""
    if pool.rng.random() < 0.5:
        pairs = pool.rng.sample(range(2, 500), 2 * pool.rng.randint(repeats + 1, 12))
        return [calculate(a, b, "*") for a, b in zip(pairs[::2], pairs[1::2], strict=True)]
    return [search(pool.topic()) for _ in range(pool.rng.randint(repeats + 1, 10))]


def under_threshold(pool: Pool, repeats: int) -> list[Action]:
    """A call or cycle repeated one time fewer than the threshold."""
    return pool.research(pool.rng.randint(0, 8)) + pool.cycle(pool.rng.randint(1, 3)) * (
        repeats - 1
    )


def broken_cycle(pool: Pool, repeats: int) -> list[Action]:
    """A cycle whose last turn ends in a new call instead of completing."""
    cycle = pool.cycle(pool.rng.randint(1, 3))
    return (
        pool.research(pool.rng.randint(0, 6)) + cycle * (repeats - 1) + cycle[:-1] + [pool.fresh()]
    )


def period4(pool: Pool, repeats: int) -> list[Action]:
    """Four calls taking turns: beyond max_period, so productive by the detector's rule."""
    return pool.cycle(4) * repeats


def revisits(pool: Pool, repeats: int) -> list[Action]:
    """Research that comes back to earlier calls now and then, never within 3 calls of them."""
    actions = pool.research(pool.rng.randint(8, 20))
    for again in pool.rng.sample(actions[:-4], pool.rng.randint(1, 3)):
        first = actions.index(again)
        actions.insert(pool.rng.randrange(first + 4, len(actions) + 1), again)
    return actions


def mixed(pool: Pool, repeats: int) -> list[Action]:
    """A long run: research, paging, a retry, polling and sums, in a random order."""
    parts = [research, paging_offset, retry, polling, same_tool]
    pool.rng.shuffle(parts)
    return [action for part in parts for action in part(pool, repeats)]


PLAN: list[tuple[str, str, Callable[[Pool, int], list[Action]], int]] = [
    ("stuck", "identical", identical, 14),
    ("stuck", "prefix-identical", prefix_identical, 14),
    ("stuck", "cycle2", cycle2, 12),
    ("stuck", "prefix-cycle2", prefix_cycle2, 12),
    ("stuck", "cycle3", cycle3, 10),
    ("stuck", "prefix-cycle3", prefix_cycle3, 10),
    ("stuck", "failing", failing, 12),
    ("stuck", "failing-cycle2", failing_cycle2, 6),
    ("stuck", "key-order", key_order, 12),
    ("stuck", "near-miss-paging", near_miss_paging, 8),
    ("stuck", "polling-stalled", polling_stalled, 8),
    ("productive", "paging-offset", paging_offset, 10),
    ("productive", "paging-page", paging_page, 8),
    ("productive", "paging-cursor", paging_cursor, 8),
    ("productive", "polling", polling, 12),
    ("productive", "polling-finishes", polling_finishes, 6),
    ("productive", "retry", retry, 12),
    ("productive", "research", research, 16),
    ("productive", "same-tool", same_tool, 10),
    ("productive", "under-threshold", under_threshold, 14),
    ("productive", "broken-cycle", broken_cycle, 14),
    ("productive", "period4", period4, 8),
    ("productive", "revisits", revisits, 10),
    ("productive", "mixed", mixed, 6),
]


# --- the rule, read the slow way ------------------------------------------------------


def first_stuck(actions: list[Action], repeats: int) -> int | None:
    """The 1-based step after which the trace is stuck, by brute force; None if never."""
    keys = [
        (a["name"], json.dumps(a["arguments"], sort_keys=True), a["ok"], a["content"])
        for a in actions
    ]
    for end in range(1, len(keys) + 1):
        for period in range(1, MAX_PERIOD + 1):
            tail = keys[max(0, end - period * repeats) : end]
            if len(tail) == period * repeats and tail == tail[:period] * repeats:
                return end
    return None


def generate() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    traces = []
    for label, shape, make, count in PLAN:
        for number in range(1, count + 1):
            repeats = rng.choices([2, 3, 4, 5], weights=[15, 60, 15, 10])[0]
            actions = make(Pool(random.Random(rng.getrandbits(64))), repeats)
            trace_id = f"{shape}-{number:02d}"
            expected = len(actions) if label == "stuck" else None
            if first_stuck(actions, repeats) != expected:
                raise AssertionError(f"{trace_id} is not {label} by the rule")
            traces.append(
                {
                    "id": trace_id,
                    "label": label,
                    "shape": shape,
                    "repeats": repeats,
                    "actions": actions,
                }
            )
    return traces


def main() -> None:
    traces = generate()
    for label in ("stuck", "productive"):
        lines = [json.dumps(trace) for trace in traces if trace["label"] == label]
        (HERE / f"{label}.jsonl").write_text("\n".join(lines) + "\n")
        print(f"{label}.jsonl: {len(lines)} traces")


if __name__ == "__main__":
    main()
