"""The stuck pattern the dashboard shows is the notice's `pattern` field; notices written
before it was one get it from their words once, by the migration."""

from __future__ import annotations

import importlib

from django.apps import apps
from django.contrib.auth.models import User

from chat.models import Message, Role
from dashboard.periods import period_named
from dashboard.selectors import dashboard_figures
from tests.dashboard.conftest import make_run

STUCK = "the same 2 calls (search(owls), read(doc-1)) 3 times over"
migration = importlib.import_module("dashboard.migrations.0002_notice_pattern")


def test_it_fills_the_pattern_of_notices_written_before_it_was_a_field(
    staff: User, alice: User
) -> None:
    made = make_run(alice, reason="no_progress", pattern=STUCK)
    notice = Message.objects.get(run=made.run, role=Role.SYSTEM)
    old = {key: value for key, value in notice.metadata.items() if key != "pattern"}
    Message.objects.filter(pk=notice.pk).update(metadata=old)
    before = dashboard_figures(period=period_named("24h")).stuck

    migration.fill_patterns(apps, None)

    after = dashboard_figures(period=period_named("24h")).stuck
    assert (before, [(row.pattern, row.runs) for row in after]) == ([], [(STUCK, 1)])
    notice.refresh_from_db()
    assert notice.metadata == {**old, "pattern": STUCK}
