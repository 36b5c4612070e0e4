from __future__ import annotations

from django.apps import AppConfig


class RunsConfig(AppConfig):
    """A run's life on the Django side: queued, claimed and hosted on a worker's loop,
    journaled and published as it goes, cancelled, continued, resumed or interrupted.
    Its models stay in `chat.models` (see ARCHITECTURE.md)."""

    name = "runs"

    def ready(self) -> None:
        from runs import sweeper, tools  # noqa: F401 (tools registers its system check)

        sweeper.connect_worker_signals()
