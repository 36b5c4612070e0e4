"""Every URL pattern Django resolves, for the tests whose tables must name them all."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.urls import URLResolver, get_resolver


@dataclass(frozen=True)
class Pattern:
    route: str  # as written, from the root: "api/runs/<str:run_id>/"
    name: str | None  # with its namespace: "admin:index"
    params: tuple[str, ...]  # what `reverse` needs: ("run_id",)


def every_pattern() -> Iterator[Pattern]:
    def walk(patterns: list[Any], prefix: str, namespace: str) -> Iterator[Pattern]:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
                yield from walk(pattern.url_patterns, route, inner)
            else:
                name = namespace + pattern.name if pattern.name else None
                yield Pattern(route, name, tuple(pattern.pattern.converters))

    yield from walk(get_resolver().url_patterns, "", "")
