"""Rows written fast: the seeded runs' rows go in as plain tuples, one `executemany` per
table and batch (`COPY` on PostgreSQL, whose driver sends an `executemany` a row at a
time here): building 600,000 model instances took most of a minute for 100,000 runs."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, models

from chat.models import Conversation, Message, Run, RunEvent

BATCH = 5_000


@dataclass
class Seeded:
    """What `seed_runs` added."""

    users: int = 0
    conversations: int = 0
    runs: int = 0
    messages: int = 0
    events: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


class Table:
    """Rows of one model waiting for an `executemany`, each value prepared once for the
    database (only the columns that need it: ids, times, JSON)."""

    def __init__(self, model: type[models.Model], names: Sequence[str]) -> None:
        fields = [_column(model, name) for name in names]
        quote = connection.ops.quote_name
        columns = ", ".join(quote(column) for _, column in fields)
        marks = ", ".join(["%s"] * len(fields))
        self.sql = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({marks})"
        self.copy = f"COPY {quote(model._meta.db_table)} ({columns}) FROM STDIN"
        self.prepare = [_preparer(each) for each, _ in fields]
        self.rows: list[tuple[Any, ...]] = []

    def add(self, *values: Any) -> None:
        self.rows.append(values)

    def flush(self) -> int:
        prepared = [
            [prepare(value) for prepare, value in zip(self.prepare, row, strict=True)]
            for row in self.rows
        ]
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":  # one row at a time otherwise: COPY
                with cursor.cursor.copy(self.copy) as copy:
                    for row in prepared:
                        copy.write_row(row)
            else:
                for start in range(0, len(prepared), BATCH):
                    cursor.executemany(self.sql, prepared[start : start + BATCH])
        written = len(self.rows)
        self.rows.clear()
        return written


def _column(model: type[models.Model], name: str) -> tuple[models.Field[Any, Any], str]:
    each = model._meta.get_field(name)
    if not isinstance(each, models.Field) or each.column is None:
        raise ValueError(f"{model.__name__}.{name} has no column")
    return each, each.column


def _preparer(each: models.Field[Any, Any]) -> Callable[[Any], Any]:
    plain = (models.IntegerField, models.CharField, models.TextField, models.FloatField,
             models.BooleanField)  # fmt: skip
    if isinstance(each, plain) and not isinstance(each, models.ForeignKey):
        return lambda value: value
    return functools.partial(_prepared, each)


def _prepared(each: models.Field[Any, Any], value: Any) -> Any:
    return None if value is None else each.get_db_prep_save(value, connection)


@dataclass
class Tables:
    conversations: Table = field(
        default_factory=lambda: Table(
            Conversation,
            ("id", "owner", "title", "skill", "model", "last_message_seq", "created_at",
             "updated_at", "tool_grants"),
        )
    )  # fmt: skip
    runs: Table = field(
        default_factory=lambda: Table(
            Run,
            ("id", "conversation", "status", "pending_action", "reason", "failure_class",
             "iterations", "tool_calls", "tokens", "cost_usd", "elapsed_ms", "last_event_seq",
             "created_at", "started_at", "finished_at", "lease", "auto_resumes",
             "limit_action"),
        )
    )  # fmt: skip
    messages: Table = field(
        default_factory=lambda: Table(
            Message,
            ("conversation", "run", "seq", "role", "content", "metadata", "termination_reason",
             "failure_class", "superseded", "created_at"),
        )
    )  # fmt: skip
    events: Table = field(
        default_factory=lambda: Table(RunEvent, ("run", "seq", "type", "data", "created_at"))
    )

    def flush(self, seeded: Seeded) -> None:
        self.conversations.flush()  # in this order: each refers to the ones before it
        self.runs.flush()
        seeded.messages += self.messages.flush()
        seeded.events += self.events.flush()
