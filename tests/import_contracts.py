"""An import-linter contract of our own: no module imports another that imports it back,
directly or through others, counting imports inside functions (`make test` runs
`lint-imports`; the contracts are in pyproject.toml). import-linter's own
`acyclic_siblings` looks for cycles between the children of one package, not between
modules of different apps, which is where ours grew."""

from __future__ import annotations

import sys
from typing import Any

from importlinter.application import output
from importlinter.domain.contract import Contract, ContractCheck


class AcyclicModulesContract(Contract):
    """Kept when the graph of the root packages' modules has no cycle."""

    type_name = "acyclic_modules"

    def check(self, graph: Any, verbose: bool) -> ContractCheck:
        modules = sorted(m for m in graph.modules if not graph.is_module_squashed(m))
        cycles = [
            sorted(group)
            for group in _strongly_connected(modules, graph.find_modules_directly_imported_by)
            if len(group) > 1
        ]
        return ContractCheck(kept=not cycles, metadata={"cycles": cycles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for cycle in check.metadata["cycles"]:
            output.print_error("These modules import each other (in a circle):", bold=False)
            for module in cycle:
                output.print_error(f"  - {module}", bold=False)
            output.new_line()


def _strongly_connected(nodes: list[str], edges: Any) -> list[list[str]]:
    """Tarjan's strongly connected components of the graph `edges(node)` spans."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(nodes)))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges(node)):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            groups.append(group)

    for node in nodes:
        if node not in index:
            visit(node)
    return groups
