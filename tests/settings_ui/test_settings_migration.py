"""Accounts made before accounts came with their settings get them by migration, from
the site's defaults then; an account that has settings keeps them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [("settings_ui", "0003_site_defaults")]
AFTER = [("settings_ui", "0004_settings_for_every_account")]


def test_the_migration_stores_the_site_defaults_for_accounts_without_settings():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    user = old.get_model("auth", "User")
    settings_row = old.get_model("settings_ui", "AgentSettings")
    old.get_model("settings_ui", "SiteDefaults").objects.create(
        pk=1, max_iterations=22, token_budget=64_000
    )
    bare = user.objects.create(username="bare")
    kept = user.objects.create(username="kept")
    settings_row.objects.create(user=kept, max_iterations=7)

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("settings_ui", "AgentSettings")

    assert new.objects.get(user_id=bare.pk).max_iterations == 22
    assert new.objects.get(user_id=bare.pk).token_budget == 64_000
    assert new.objects.get(user_id=kept.pk).max_iterations == 7
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
