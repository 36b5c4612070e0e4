from __future__ import annotations

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The staff dashboard: limit statistics over runs, and limit recommendations."""

    name = "dashboard"
