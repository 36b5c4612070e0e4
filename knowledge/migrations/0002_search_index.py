"""The full-text index over passages, in each database's own way (knowledge/search.py).

SQLite: an FTS5 table over knowledge_passage (external content, English Porter
stemmer), kept in step by triggers, so that every way a passage goes (a document
deleted, a user deleted with their documents, a test's flush) leaves no stale entry.
PostgreSQL: a stored generated tsvector column (English) with a GIN index.

A later migration that alters knowledge_passage must create the triggers again on
SQLite: Django alters a SQLite table by building a new one, and the old one's
triggers go with it.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

SQLITE_FORWARD = [
    """
    CREATE VIRTUAL TABLE knowledge_passage_fts USING fts5(
        location, text,
        content='knowledge_passage', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE TRIGGER knowledge_passage_fts_insert AFTER INSERT ON knowledge_passage BEGIN
        INSERT INTO knowledge_passage_fts (rowid, location, text)
        VALUES (new.id, new.location, new.text);
    END
    """,
    """
    CREATE TRIGGER knowledge_passage_fts_delete AFTER DELETE ON knowledge_passage BEGIN
        INSERT INTO knowledge_passage_fts (knowledge_passage_fts, rowid, location, text)
        VALUES ('delete', old.id, old.location, old.text);
    END
    """,
    """
    CREATE TRIGGER knowledge_passage_fts_update AFTER UPDATE ON knowledge_passage BEGIN
        INSERT INTO knowledge_passage_fts (knowledge_passage_fts, rowid, location, text)
        VALUES ('delete', old.id, old.location, old.text);
        INSERT INTO knowledge_passage_fts (rowid, location, text)
        VALUES (new.id, new.location, new.text);
    END
    """,
    # Passages written before this migration (none in practice) join the index.
    "INSERT INTO knowledge_passage_fts (knowledge_passage_fts) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS knowledge_passage_fts_update",
    "DROP TRIGGER IF EXISTS knowledge_passage_fts_delete",
    "DROP TRIGGER IF EXISTS knowledge_passage_fts_insert",
    "DROP TABLE IF EXISTS knowledge_passage_fts",
]
POSTGRESQL_FORWARD = [
    """
    ALTER TABLE knowledge_passage ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, location), 'B')
        || setweight(to_tsvector('english'::regconfig, text), 'D')
    ) STORED
    """,
    "CREATE INDEX knowledge_passage_search ON knowledge_passage USING GIN (search)",
]
POSTGRESQL_BACKWARD = [
    "DROP INDEX IF EXISTS knowledge_passage_search",
    "ALTER TABLE knowledge_passage DROP COLUMN IF EXISTS search",
]


def _run(statements: dict[str, list[str]]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        vendor = schema_editor.connection.vendor
        if vendor not in statements:
            raise RuntimeError(f"The knowledge base has no full-text search on {vendor}.")
        for statement in statements[vendor]:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRESQL_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRESQL_BACKWARD}),
        )
    ]
