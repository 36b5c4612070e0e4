from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate

SEARCH_INDEX_MIGRATION = ("knowledge", "0002_search_index")


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Knowledge base"

    def ready(self) -> None:
        post_migrate.connect(_index_guide, sender=self)


def _index_guide(using: str, **_: Any) -> None:
    """`make run` migrates at start: the built-in guide is (re)indexed then if it changed,
    once the knowledge base's tables and search index exist."""
    from django.db import connections
    from django.db.migrations.recorder import MigrationRecorder

    from knowledge.services import ensure_guide

    if SEARCH_INDEX_MIGRATION in MigrationRecorder(connections[using]).applied_migrations():
        ensure_guide(using=using)
