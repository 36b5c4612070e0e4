"""Database functions the dashboard's queries need on SQLite and PostgreSQL alike, and
the 95th percentile taken from the values a group's list carries.

Percentiles are nearest-rank (PostgreSQL's `percentile_disc`): the smallest value that
95% of the group's values are at or below, taken from a list of values or from how many
times each value was seen (a `Distribution`). For a limit that is the one that would
have let 95% of the runs finish. SQLite has no percentile function, and window
functions over 100,000 runs took most of a second there; a group's values as one text
list (GROUP_CONCAT, STRING_AGG), read here, take a few tens of milliseconds.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Aggregate, F, Func, TextField
from django.db.models.sql.compiler import SQLCompiler

Number = TypeVar("Number", int, float)
PERCENTILE = 95


class ValueList(Aggregate):
    """A group's values (NULLs left out) as text: "3,15,2". Read it with `values_of`."""

    function = "GROUP_CONCAT"
    output_field = TextField()

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, Any]:
        clone = self.copy()
        clone.template = "STRING_AGG((%(expressions)s)::text, ',')"
        return clone.as_sql(compiler, connection, **extra)


class UtcHour(Func):
    """The UTC hour a time falls in. Read it with `hour_key`: SQLite gives text
    ("2026-11-20 13"), PostgreSQL the hour's start (TO_CHAR took twice as long)."""

    output_field = TextField()

    def as_sqlite(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, Any]:
        # Django keeps times in SQLite as UTC text, "2026-11-20 13:05:09.123456".
        return self.as_sql(compiler, connection, template="SUBSTR(%(expressions)s, 1, 13)")

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, Any]:
        template = "DATE_TRUNC('hour', %(expressions)s AT TIME ZONE 'UTC')"
        return self.as_sql(compiler, connection, template=template)


def hour_key(value: str | datetime) -> str:
    """An `UtcHour` as text: "2026-11-20 13"."""
    return value if isinstance(value, str) else value.strftime("%Y-%m-%d %H")


class JsonText(Func):
    """One value of a JSON column by its keys (constants of ours, written into the SQL):
    SQLite's `json_extract` (which keeps numbers numbers), PostgreSQL's `#>>` (text).
    Django's own key transforms read the JSON twice a value on SQLite."""

    output_field = TextField()

    def __init__(self, column: str, *keys: str) -> None:
        if not all(key.isidentifier() for key in keys):
            raise ValueError(f"JSON keys must be plain names: {keys!r}")
        self.keys = keys
        super().__init__(F(column))

    def as_sqlite(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, Any]:
        path = "$." + ".".join(self.keys)
        return self.as_sql(
            compiler, connection, template=f"JSON_EXTRACT(%(expressions)s, '{path}')"
        )

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, Any]:
        path = "{" + ",".join(self.keys) + "}"
        return self.as_sql(compiler, connection, template=f"(%(expressions)s #>> '{path}')")


def values_of(text: str | None, kind: Callable[[str], Number]) -> list[Number]:
    """The numbers of a `ValueList`."""
    return list(map(kind, text.split(","))) if text else []


def percentile(values: Iterable[int], percent: int = PERCENTILE) -> int | None:
    """The nearest-rank percentile of `values`, in any order (None if there are none)."""
    return Distribution.of(values).percentile(percent)


class Distribution:
    """How many times each value was seen. It is kept as parts, each sorted, that add up
    without merging (a period adds its days' parts), and the 95th percentile walks down
    from the largest values: it reads only the top 5% or so."""

    def __init__(self, parts: list[tuple[list[int], list[int]]] | None = None) -> None:
        self.parts = parts or []  # (values ascending, how many times each)

    @classmethod
    def of(cls, values: Iterable[int]) -> Distribution:
        counts = Counter(values)
        ordered = sorted(counts)
        return cls([(ordered, [counts[value] for value in ordered])] if ordered else [])

    def add(self, other: Distribution) -> None:
        self.parts.extend(other.parts)

    def total(self) -> int:
        return sum(sum(counts) for _, counts in self.parts)

    def percentile(self, percent: int = PERCENTILE) -> int | None:
        total = self.total()
        if not total:
            return None
        from_top = total - max(math.ceil(total * percent / 100), 1) + 1
        largest_first = [
            zip(reversed(values), reversed(counts), strict=True) for values, counts in self.parts
        ]
        seen = 0
        for value, count in heapq.merge(*largest_first, reverse=True):
            seen += count
            if seen >= from_top:
                return value
        raise AssertionError("unreachable: the counts add up to `total`")

    def to_json(self) -> list[list[int]]:
        """As one part: [values, counts]."""
        if len(self.parts) == 1:
            return [self.parts[0][0], self.parts[0][1]]
        counts: Counter[int] = Counter()
        for values, times in self.parts:
            counts.update(dict(zip(values, times, strict=True)))
        ordered = sorted(counts)
        return [ordered, [counts[value] for value in ordered]]

    @classmethod
    def from_json(cls, data: Sequence[Sequence[int]]) -> Distribution:
        values, counts = data
        return cls([(list(values), list(counts))] if values else [])

    def __repr__(self) -> str:
        return f"Distribution({self.to_json()!r})"
