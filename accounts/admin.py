"""Staff make invites in the admin (each is a one-time sign-up link) and see API tokens."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from accounts.models import ApiToken, Invite


@admin.register(Invite)
class InviteAdmin(admin.ModelAdmin):
    list_display = ("__str__", "note", "staff", "link", "created_at", "used_by", "used_at")
    list_filter = ("staff",)
    fields = ("note", "staff", "link", "created_by", "used_by", "used_at")
    readonly_fields = ("link", "created_by", "used_by", "used_at")

    @admin.display(description="Sign-up link (send it to them)")
    def link(self, invite: Invite) -> str:
        return invite.path() if invite.pk else "Shown once saved."

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("hint", "name", "user", "created_at", "last_used_at")
    readonly_fields = ("key_hash", "hint")
