from __future__ import annotations

from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"

    def ready(self) -> None:
        from chat import sweeper, tools  # noqa: F401 (tools registers its system check)

        sweeper.connect_worker_signals()
