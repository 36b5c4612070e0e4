"""How many helpers (subagents) a run may start in all, how deep helpers may start
helpers, and how many may work at once: the operator's `CallBounds`, held for a run's
whole tree of helpers.

A run's `delegate` tool keeps its tree; a helper's own `delegate` (when the depth allows
one) counts in the same tree, one level deeper, found through the helper's context.
A delegation past a bound is refused before any helper starts (`ToolRefused`): the
model reads why and what to do instead, and the limit log counts it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from agents.config import CallBounds
from agents.tools import Refusal, ToolRefused


@dataclass
class HelperTree:
    """The helpers of one run, its helpers' helpers included: how many it started, and
    how many are working now."""

    bounds: CallBounds
    started: int = 0
    working: int = 0


# The tree of the helper whose run is going on here, and its depth (1: the run's own helper).
_PLACE: ContextVar[tuple[HelperTree, int] | None] = ContextVar("oracle_helper", default=None)


def place(own: HelperTree) -> tuple[HelperTree, int]:
    """The tree a delegation counts in and the depth its helper would have: `own` at
    depth 1 from the run itself; from inside a helper, that helper's tree, one deeper."""
    where = _PLACE.get()
    if where is None:
        return own, 1
    tree, depth = where
    return tree, depth + 1


def check(tree: HelperTree, depth: int) -> None:
    """Refuse a helper at `depth` that would pass one of the tree's bounds."""
    bounds = tree.bounds
    if depth > bounds.subagents_max_depth:
        levels = _plural(bounds.subagents_max_depth, "level")
        raise ToolRefused(
            f"a helper may not start helpers of its own here (helpers go {levels} deep at "
            "most); do this task yourself with your tools, or answer with what you have",
            Refusal("subagent_depth", "subagent_depth", depth, bounds.subagents_max_depth),
        )
    if tree.started >= bounds.subagents_max_per_run:
        raise ToolRefused(
            f"this run has started {_plural(tree.started, 'helper')}, the most it may "
            f"({bounds.subagents_max_per_run}); do the rest yourself with your tools, or "
            "answer with what you have",
            Refusal("subagents_per_run", "subagents", tree.started + 1,
                    bounds.subagents_max_per_run),
        )  # fmt: skip
    if tree.working >= bounds.subagents_max_concurrent:
        raise ToolRefused(
            "as many helpers are working now as may work at once "
            f"({bounds.subagents_max_concurrent}); give this task again once one has "
            "answered, or give fewer tasks at a time",
            Refusal("subagents_at_once", "subagents_working", tree.working + 1,
                    bounds.subagents_max_concurrent),
        )  # fmt: skip


@contextmanager
def helper_at(tree: HelperTree, depth: int) -> Iterator[None]:
    """A helper of `tree` at `depth`, counted as started, and as working while inside;
    its own delegations count in the same tree. Refused first past a bound."""
    check(tree, depth)
    tree.started += 1
    tree.working += 1
    token = _PLACE.set((tree, depth))
    try:
        yield
    finally:
        tree.working -= 1
        _PLACE.reset(token)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
