"""Staff make invites in the admin (each is a one-time sign-up link) and see API tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from accounts.models import ApiToken, Invite


@dataclass(frozen=True)
class SignUpLink:
    """An invite's sign-up link in full, as the staff member reached the site (scheme,
    host, port), with a Copy button. The admin gives a display function the invite
    alone, so one of these is made for each request: a column and a field that are
    equal for equal requests."""

    request: HttpRequest
    __name__ = "link"  # the admin names the column and the field's row after it
    short_description = "Sign-up link (send it to them)"

    def __call__(self, invite: Invite) -> SafeString | str:
        if not invite.pk:
            return "Shown once saved."
        url = self.request.build_absolute_uri(invite.path())
        return mark_safe(render_to_string("accounts/_invite_link.html", {"url": url}).strip())


@admin.register(Invite)
class InviteAdmin(admin.ModelAdmin):
    list_display = ("__str__", "note", "staff", "created_at", "used_by", "used_at")
    list_filter = ("staff",)
    fields = ("note", "staff", "created_by", "used_by", "used_at")
    readonly_fields = ("created_by", "used_by", "used_at")

    class Media:
        js = ("js/copy_link.js",)

    def get_list_display(self, request: HttpRequest) -> Any:
        shown = list(super().get_list_display(request))
        return [*shown[:3], SignUpLink(request), *shown[3:]]

    def get_fields(self, request: HttpRequest, obj: Invite | None = None) -> Any:
        return [*self.fields[:2], SignUpLink(request), *self.fields[2:]]

    def get_readonly_fields(self, request: HttpRequest, obj: Invite | None = None) -> Any:
        return [SignUpLink(request), *super().get_readonly_fields(request, obj)]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("hint", "name", "user", "created_at", "last_used_at")
    readonly_fields = ("key_hash", "hint")
