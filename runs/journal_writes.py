"""The SQL of a journal's tick: every run's new rows, changed rows, run fields and events
in a few statements, a run another worker took over left out (its lease moved on)."""

from __future__ import annotations

import logging
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Field, Model
from django.utils import timezone

from agents.events import EventType
from chat.models import Conversation, Message, Run, RunEvent
from runs.engine import remember_windows
from runs.recorder import Batch

logger = logging.getLogger(__name__)

TAKEN_OVER: list[tuple[int, int]] = []  # written() of a batch dropped: see write_all


def write_all(batches: list[Batch]) -> list[list[tuple[int, int]] | None]:
    """Write the batches in one transaction: each run's new rows, then every changed
    row and every run's fields in one statement per shape, then all events at once.

    A run claimed again since this worker claimed it (its lease moved on: it was
    thought lost and resumed elsewhere) is not written: its batch comes back as
    `TAKEN_OVER`, and the host stops it here."""
    with transaction.atomic():
        ids = [batch.recorder.run.pk for batch in batches]
        leases = _leases(ids)
        mine = [b for b in batches if leases.get(b.recorder.run.pk) == b.recorder.run.lease]
        if len(mine) < len(batches):
            written = write_all(mine) if mine else []
            by_batch = dict(zip(map(id, mine), written, strict=True))
            return [by_batch.get(id(batch), TAKEN_OVER) for batch in batches]
        created: list[list[tuple[int, int]] | None] = [_create_rows(b) for b in batches]
        _update_many(Message, [update for batch in batches for update in batch.updates])
        _update_many(Run, [(batch.recorder.run.pk, _run_fields(batch)) for batch in batches])
        _insert_events([event for batch in batches for event in _events(batch)])
        # A window a provider's refusal showed is kept for every run after, in the same
        # transaction as the event that tells it (a refusal is rare; the scan is cheap).
        refusals = [e for b in batches for e in b.events if e["type"] == EventType.CONTEXT_REFUSED]
        if refusals:
            remember_windows(refusals)
    return created


def _leases(ids: list[Any]) -> dict[Any, int]:
    """The runs' leases, their rows locked until the transaction ends (SQLite's write
    transaction locks the whole database already). In SQL: the ORM's query cost more
    to build than to run, on every tick (bench/README.md)."""
    connection = connections[router.db_for_write(Run)]
    quote = connection.ops.quote_name
    pk, pk_column = _concrete_field(Run, "id")
    lease_column = _concrete_field(Run, "lease")[1]
    marks = ", ".join(["%s"] * len(ids))
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    sql = (
        f"SELECT {quote(pk_column)}, {quote(lease_column)} FROM {quote(Run._meta.db_table)} "
        f"WHERE {quote(pk_column)} IN ({marks}){lock}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [pk.get_db_prep_value(key, connection) for key in ids])
        rows = cursor.fetchall()
    return {pk.to_python(key): lease for key, lease in rows}


def write_each(batches: list[Batch]) -> list[list[tuple[int, int]] | None]:
    results: list[list[tuple[int, int]] | None] = []
    for batch in batches:
        try:
            results.extend(write_all([batch]))
        except Exception:
            logger.exception("writing run %s failed; kept for the next try", batch.recorder.run_id)
            results.append(None)
    return results


def _events(batch: Batch) -> list[tuple[Any, int, str, dict[str, Any]]]:
    run_id = batch.recorder.run.pk
    return [(run_id, e["seq"], e["type"], e) for e in batch.events]


def _insert_events(events: list[tuple[Any, int, str, dict[str, Any]]]) -> None:
    """INSERT the events in one `executemany`. Under load a tick holds one event for
    each streaming run, and making a `RunEvent` object of each for `bulk_create` cost
    more than the database's work (bench/README.md)."""
    if not events:
        return
    connection = connections[router.db_for_write(RunEvent)]
    quote = connection.ops.quote_name
    run, run_column = _concrete_field(RunEvent, "run")
    data, data_column = _concrete_field(RunEvent, "data")
    created, created_column = _concrete_field(RunEvent, "created_at")
    columns = ", ".join(map(quote, (run_column, "seq", "type", data_column, created_column)))
    sql = f"INSERT INTO {quote(RunEvent._meta.db_table)} ({columns}) VALUES (%s, %s, %s, %s, %s)"
    now = created.get_db_prep_value(timezone.now(), connection)
    params = [
        [
            run.get_db_prep_save(run_id, connection),
            seq,
            kind,
            data.get_db_prep_save(event, connection),
            now,
        ]
        for run_id, seq, kind, event in events
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _create_rows(batch: Batch) -> list[tuple[int, int]]:
    """Insert a batch's new messages, numbered in its conversation; their (pk, seq)."""
    if not batch.new_rows:
        return []
    recorder = batch.recorder
    conversation = Conversation.objects.select_for_update().get(pk=recorder.conversation_id)
    first = conversation.last_message_seq + 1
    messages = [
        Message(conversation_id=recorder.conversation_id, run_id=recorder.run.pk,
                seq=first + offset, **row)
        for offset, row in enumerate(batch.new_rows)
    ]  # fmt: skip
    conversation.last_message_seq = first + len(messages) - 1
    conversation.save(update_fields=["last_message_seq", "updated_at"])
    Message.objects.bulk_create(messages)
    return [(m.pk, m.seq) for m in messages]


def _run_fields(batch: Batch) -> dict[str, Any]:
    fields: dict[str, Any] = {"heartbeat_at": timezone.now(), **batch.run_fields}
    if batch.events:
        fields["last_event_seq"] = batch.events[-1]["seq"]
    return fields


def _update_many(model: type[Model], updates: list[tuple[Any, dict[str, Any]]]) -> None:
    """UPDATE rows by primary key, one `executemany` for all the rows that change the
    same fields. Under load a tick changes hundreds of rows; one ORM `update()` each
    cost more than the database's work, and `bulk_update`'s CASE more still."""
    shapes: dict[tuple[str, ...], list[tuple[Any, dict[str, Any]]]] = {}
    for pk, fields in updates:
        shapes.setdefault(tuple(fields), []).append((pk, fields))
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    meta = model._meta
    pk_field, pk_column = _concrete_field(model, meta.pk.name)
    for names, rows in shapes.items():
        columns = [_concrete_field(model, name) for name in names]
        assignments = ", ".join(f"{quote(column)} = %s" for _, column in columns)
        sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(pk_column)} = %s"
        params = [
            [field.get_db_prep_save(fields[field.name], connection) for field, _ in columns]
            + [pk_field.get_db_prep_value(pk, connection)]
            for pk, fields in rows
        ]
        with connection.cursor() as cursor:
            cursor.executemany(sql, params)


def _concrete_field(model: type[Model], name: str) -> tuple[Field[Any, Any], str]:
    """The model's field `name` and its column (only a concrete field has one)."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or field.column is None:
        raise ValueError(f"{model.__name__}.{name} has no column of its own")
    return field, field.column
