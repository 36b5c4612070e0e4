"""The suite's order under xdist (`tests.schedule`): every test once, each slow module
whole in one worker's share, the shares' costs even, quick tests at their ends."""

from __future__ import annotations

from dataclasses import dataclass

from tests.schedule import _share_sizes, balanced


@dataclass(frozen=True)
class Item:
    nodeid: str


def suite(modules: dict[str, int]) -> list[Item]:
    return [Item(f"{path}::test_{n}") for path, count in modules.items() for n in range(count)]


MODULES = {
    "tests/agents/test_quick.py": 300,
    "tests/browser/test_a.py": 10,
    "tests/browser/test_b.py": 8,
    "tests/e2e/test_c.py": 6,
    "tests/e2e/test_d.py": 4,
    "tests/chat/test_e.py": 120,
    "tests/test_serve.py": 3,
}
COSTS = {
    "tests/browser/test_a.py": 100.0,
    "tests/browser/test_b.py": 60.0,
    "tests/e2e/test_c.py": 90.0,
    "tests/e2e/test_d.py": 40.0,
    "tests/test_serve.py": 45.0,
    "tests/chat/test_e.py": 20.0,
}


def shares(ordered: list[Item], workers: int) -> list[list[Item]]:
    out, start = [], 0
    for size in _share_sizes(len(ordered), workers):
        out.append(ordered[start : start + size])
        start += size
    return out


def module(item: Item) -> str:
    return item.nodeid.split("::")[0]


def test_it_keeps_every_test_once():
    items = suite(MODULES)
    assert sorted(balanced(items, 3, COSTS), key=items.index) == items


def test_each_slow_module_is_whole_in_one_share_and_opens_it():
    for share in shares(balanced(suite(MODULES), 3, COSTS), 3):
        paths = [module(item) for item in share]
        slow = [path for path in dict.fromkeys(paths) if COSTS.get(path, 0) >= 45]
        assert paths[: sum(paths.count(path) for path in slow)] == [
            path for path in paths if path in slow
        ]
    owners = {
        path: {n for n, share in enumerate(shares(balanced(suite(MODULES), 3, COSTS), 3))
               if any(module(item) == path for item in share)}
        for path in COSTS
    }  # fmt: skip
    assert all(len(owners[path]) == 1 for path in COSTS if COSTS[path] >= 45)


def test_the_slow_modules_are_shared_out_evenly():
    costs = [
        sum(COSTS[path] for path in {module(item) for item in share} if COSTS.get(path, 0) >= 5)
        for share in shares(balanced(suite(MODULES), 3, COSTS), 3)
    ]
    # Longest first onto the cheapest: 100 + 20 | 90 + 40 | 60 + 45, where the order
    # found put all six in the first two shares.
    assert sorted(costs) == [105.0, 120.0, 130.0]


def test_a_module_not_timed_yet_is_guessed_by_its_folder():
    items = suite({"tests/agents/test_quick.py": 40, "tests/browser/test_new.py": 5})
    first = shares(balanced(items, 2, {}), 2)
    assert [module(item) for item in first[0][:5]] == ["tests/browser/test_new.py"] * 5


def test_the_quick_tests_of_a_share_end_with_the_cheapest_modules():
    """An idle worker steals the back of a share: there, the quickest modules."""
    costs = {**COSTS, "tests/agents/test_quick.py": 1.0, "tests/chat/test_e.py": 4.0}
    for share in shares(balanced(suite(MODULES), 3, costs), 3):
        quick = [module(item) for item in share if costs[module(item)] < 5]
        assert quick == sorted(quick, key=lambda path: -costs[path])
        starts = [path for n, path in enumerate(quick) if n == 0 or quick[n - 1] != path]
        assert len(starts) == len(set(starts))  # each module's tests together
