"""WebSocket URL routes."""

from __future__ import annotations

from django.urls import path

from chat.consumers import ConversationConsumer

websocket_urlpatterns = [
    # django-stubs types path() for views only; Channels routes ASGI apps with it.
    path("ws/conversations/<str:conversation_id>/", ConversationConsumer.as_asgi()),  # type: ignore[arg-type]
]
