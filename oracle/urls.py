"""URL configuration: each app owns its routes."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("ops.urls")),
    path("", include("accounts.urls")),
    path("", include("chat.urls")),
    path("settings/", include("settings_ui.urls")),
    path("api/settings/", include("settings_ui.api_urls")),
    path("admin/", admin.site.urls),
]
