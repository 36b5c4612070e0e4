from __future__ import annotations

from django.apps import AppConfig


class ChatConfig(AppConfig):
    """What a person sees and does: the chat pages, the sidebar, export and the
    conversation API. A run's life is the `runs` app's."""

    name = "chat"

    def ready(self) -> None:
        from chat.services import conversations_purge_deleted
        from ops import periodic

        # Deleted over a minute ago: Undo is over.
        periodic.register("purge deleted conversations", conversations_purge_deleted)
