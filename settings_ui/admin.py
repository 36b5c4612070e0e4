"""The admin edits stored configs under the page's rules (`AgentSettings.clean`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from agents.config import FIELDS, FIELDS_BY_NAME
from settings_ui.forms import field_help
from settings_ui.models import (
    AGENT_TYPE_FIELDS,
    SITE_DEFAULT_FIELDS,
    AgentSettings,
    AgentTypeLimits,
    ModelWindow,
    SiteDefaults,
)


class _ConfigFieldLabels(admin.ModelAdmin):
    """AgentConfig's columns labelled and explained as on the settings page."""

    def formfield_for_dbfield(
        self, db_field: models.Field[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> forms.Field | None:
        spec = FIELDS_BY_NAME.get(db_field.name)
        if spec is not None:
            kwargs.update(label=spec.label, help_text=field_help(spec))
        return super().formfield_for_dbfield(db_field, request, **kwargs)


@admin.register(AgentSettings)
class AgentSettingsAdmin(_ConfigFieldLabels):
    list_display = ("user", "model", "max_iterations", "unlimited_iterations", "limit_action")
    list_filter = ("limit_action", "unlimited_iterations")
    search_fields = ("user__username",)
    readonly_fields = ("updated_at",)
    fields = ("user", *(spec.name for spec in FIELDS), "updated_at")
    raw_id_fields = ("user",)


@admin.register(AgentTypeLimits)
class AgentTypeLimitsAdmin(_ConfigFieldLabels):
    """The per-agent-type table: each subagent type's own limits, under AgentConfig's
    bounds (`AgentTypeLimits.clean` shows the settings page's messages)."""

    list_display = ("name", "enabled", *AGENT_TYPE_FIELDS)
    list_editable = ("enabled",)
    fields = ("name", "description", "enabled", *AGENT_TYPE_FIELDS)


@admin.register(SiteDefaults)
class SiteDefaultsAdmin(_ConfigFieldLabels):
    """The settings new users start with (and Reset puts back): one row, under
    AgentConfig's bounds. Deleting it brings back AgentConfig's own defaults. The
    dashboard's limit recommendations write here too (Apply)."""

    fields = (*SITE_DEFAULT_FIELDS, "updated_at")
    readonly_fields = ("updated_at",)
    list_display = ("__str__", *SITE_DEFAULT_FIELDS, "updated_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return super().has_add_permission(request) and not SiteDefaults.objects.exists()

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        obj.pk = 1  # the one row
        super().save_model(request, obj, form, change)


@admin.register(ModelWindow)
class ModelWindowAdmin(admin.ModelAdmin):
    """The context windows providers' refusals showed, per model: read here, and
    deleted after the model's server was given a larger context (the next refusal, if
    any, teaches it again)."""

    list_display = ("model", "tokens", "ratio", "refusals", "learned_at")
    readonly_fields = ("model", "tokens", "ratio", "refusals", "learned_at")
    search_fields = ("model",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
