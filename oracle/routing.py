"""WebSocket URL routes; each app adds its consumers here."""

from __future__ import annotations

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
