"""URL configuration: each app owns its routes."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    # Browsers ask for /favicon.ico where no page links an icon (the admin, the API).
    path("favicon.ico", login_not_required(RedirectView.as_view(url=static("favicon.svg")))),
    path("", include("ops.urls")),
    path("", include("accounts.urls")),
    path("", include("chat.urls")),
    path("", include("knowledge.urls")),
    path("", include("toolbox.urls")),
    path("settings/", include("settings_ui.urls")),
    path("api/settings/", include("settings_ui.api_urls")),
    path("dashboard/", include("dashboard.urls")),
    path("admin/", admin.site.urls),
]

handler400 = "ops.errors.bad_request"
handler403 = "ops.errors.permission_denied"
handler404 = "ops.errors.page_not_found"
handler500 = "ops.errors.server_error"
