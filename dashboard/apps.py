from __future__ import annotations

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The staff dashboard: limit statistics over runs, and limit recommendations."""

    name = "dashboard"

    def ready(self) -> None:
        from dashboard.tallies import keep_up_if_due
        from ops import periodic

        # The day tallies, counted before a page needs them.
        periodic.register("count the dashboard's day tallies", keep_up_if_due)
