"""Staff set the daily spending caps here and can look through the alerts."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from ops.models import Alert, SpendCaps

# ModelAdmin is generic only in the stubs (see pyproject.toml): hence the ignores.


@admin.register(SpendCaps)
class SpendCapsAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """One row: the list opens it, and it can be neither added nor deleted."""

    fields = ("user_daily_cost_usd", "site_daily_cost_usd", "updated_at")
    readonly_fields = ("updated_at",)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        caps = SpendCaps.load()
        return HttpResponseRedirect(reverse("admin:ops_spendcaps_change", args=[caps.pk]))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("title", "kind", "window_start", "created_at", "acknowledged_at")
    list_filter = ("kind", "acknowledged_at")
    readonly_fields = (
        "kind",
        "window_start",
        "window_end",
        "title",
        "detail",
        "value",
        "threshold",
        "created_at",
        "acknowledged_at",
        "acknowledged_by",
    )
    actions = ("acknowledge",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Acknowledge the selected alerts")
    def acknowledge(self, request: HttpRequest, queryset: QuerySet[Alert]) -> None:
        for alert in queryset:
            alert.acknowledge(by=request.user)  # type: ignore[arg-type]
