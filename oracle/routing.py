"""WebSocket URL routes."""

from __future__ import annotations

from channels.security.websocket import WebsocketDenier
from django.urls import path, re_path

from chat.consumers import ConversationConsumer

websocket_urlpatterns = [
    # django-stubs types path() for views only; Channels routes ASGI apps with it.
    path("ws/conversations/<str:conversation_id>/", ConversationConsumer.as_asgi()),  # type: ignore[arg-type]
    # Any other address is refused (403), not left to Channels' "No route found" error
    # (a traceback in the log and a 500 for every scanner's probe).
    re_path("", WebsocketDenier.as_asgi()),  # type: ignore[arg-type]
]
