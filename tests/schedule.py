"""The order xdist's workers take the suite in: the longest modules first, shared out
so each worker's share costs about the same, the quick tests last.

pytest-xdist's `worksteal` gives each of the N workers a contiguous Nth of the
collected tests, then lets an idle worker take the back half of the longest queue. In
the order tests are found, one worker's Nth held the end-to-end modules and another's
the engine's millisecond tests: the suite waited on the first one at the end. Here
each worker's Nth opens with whole slow modules (a module's fixtures, a served
Oracle or a Chromium, are made once where it runs), chosen longest first onto the
cheapest share, and ends with quick tests, which are what an idle worker steals.

A module's cost is its seconds in `tests/durations.json` (from a run's JUnit XML:
`python -m tests.schedule var/test-junit.xml`, which `make test` writes), or a guess
by folder for a module not in it. Loaded by `make test` as `-p tests.schedule`; in a
plain `pytest` (no workers) the order is left alone.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

DURATIONS = Path(__file__).with_name("durations.json")
SLOW_MODULE = 5.0  # seconds: a module that costs less fills the shares' ends
GUESS_PER_TEST = {"tests/browser/": 6.0, "tests/e2e/": 6.0, "tests/e2e_ask/": 2.5}
GUESS_OTHERWISE = 0.2


@dataclass
class Share:
    """The tests one worker starts with: its slow modules, then quick tests."""

    size: int
    cost: float = 0.0
    slow: list[list[Any]] = field(default_factory=list)

    @property
    def room(self) -> int:
        return self.size - sum(len(module) for module in self.slow)


def _guess(path: str, tests: int) -> float:
    for folder, each in GUESS_PER_TEST.items():
        if path.startswith(folder):
            return each * tests
    return GUESS_OTHERWISE * tests


def _share_sizes(total: int, workers: int) -> list[int]:
    """How many tests worksteal first sends each worker (`_send_tests`)."""
    sizes, left = [], total
    for remaining in range(workers, 0, -1):
        sizes.append(left // remaining)
        left -= sizes[-1]
    return sizes


def balanced(items: list[Any], workers: int, costs: dict[str, float]) -> list[Any]:
    """`items` reordered into `workers` shares of the sizes worksteal sends."""
    modules: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        modules[_path(item)].append(item)
    cost = {path: costs.get(path, _guess(path, len(tests))) for path, tests in modules.items()}
    shares = [Share(size) for size in _share_sizes(len(items), workers)]
    quick: list[Any] = []
    for path in sorted(modules, key=lambda path: -cost[path]):
        share = min(shares, key=lambda share: share.cost)
        if cost[path] < SLOW_MODULE or share.room < len(modules[path]):
            quick.extend(modules[path])
            continue
        share.slow.append(modules[path])
        share.cost += cost[path]
    found = {id(item): n for n, item in enumerate(items)}
    quick.sort(key=lambda item: found[id(item)])  # as found: a module's tests stay together
    ordered: list[Any] = []
    for share in shares:
        for module in share.slow:
            ordered.extend(module)
        ordered.extend(_dearest_first(quick[: share.room], cost))
        del quick[: share.room]
    return ordered + quick


def _dearest_first(tests: list[Any], cost: dict[str, float]) -> list[Any]:
    """A share's quick tests, their modules the dearest first (each module's tests in the
    order found): what an idle worker steals from its end is then the cheapest."""
    return sorted(tests, key=lambda test: -cost[_path(test)])  # stable: modules stay whole


def _path(test: Any) -> str:
    return str(test.nodeid.split("::")[0])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[Any]) -> None:
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    if workers < 2:
        return
    costs = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    items[:] = balanced(items, workers, costs)


def record(junit_xml: Path) -> dict[str, float]:
    """Each module's seconds in a JUnit XML report, its tests' setup and teardown too."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        if parts[-1][:1].isupper():  # a test class's name ends it
            parts.pop()
        seconds["/".join(parts) + ".py"] += float(case.get("time") or 0)
    return {path: round(value, 1) for path, value in sorted(seconds.items())}


if __name__ == "__main__":
    DURATIONS.write_text(json.dumps(record(Path(sys.argv[1])), indent=1) + "\n")
