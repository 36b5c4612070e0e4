"""Which decision tree a skill runs under: trees registered by name.

A skill brings its own tree with `@decision_tree("name")`, which never touches the
loop; `create_tree` builds the one a run asks for by that name. The trees are
registered where they are defined: the default one in `agents.tree`, the skills'
own in `agents.skill_trees`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from agents.config import AgentConfig, OperatorLimits
from agents.decisions import DecisionTree

TreeFactory = Callable[[AgentConfig, OperatorLimits], DecisionTree]
F = TypeVar("F", bound=TreeFactory)

_TREES: dict[str, TreeFactory] = {}


class UnknownTreeError(LookupError):
    """No decision tree is registered under that name."""


def decision_tree(name: str) -> Callable[[F], F]:
    """Register a tree factory (usually the class) under a skill name."""

    def register(factory: F) -> F:
        if name in _TREES and _TREES[name] is not factory:
            raise ValueError(f"a decision tree named {name!r} is already registered")
        _TREES[name] = factory
        return factory

    return register


def tree_names() -> list[str]:
    """The registered skill names, sorted."""
    return sorted(_TREES)


def create_tree(
    name: str, config: AgentConfig, operator: OperatorLimits | None = None
) -> DecisionTree:
    """Build the tree registered under `name`."""
    try:
        factory = _TREES[name]
    except KeyError:
        known = ", ".join(tree_names())
        raise UnknownTreeError(f"unknown skill {name!r} (known: {known})") from None
    return factory(config, operator or OperatorLimits())
