"""Reads and writes of a user's AgentConfig: stored as the account is made, and a read
never writes. The chat task and the CLI call these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from agents.config import AgentConfig
from settings_ui.models import AgentSettings, SiteDefaults
from settings_ui.policy import config_from_raw, operator_limits

__all__ = [
    "agent_config_for",
    "agent_config_reset",
    "agent_config_update",
    "agent_settings_create",
    "operator_limits",
]


def _settings_row(user: Any) -> AgentSettings:
    """The user's row, locked, for a write (one made before rows came with accounts is
    stored now, from the site's defaults)."""
    rows = AgentSettings.objects.select_for_update()
    row, _ = rows.get_or_create(user=user, defaults=SiteDefaults.config().to_dict())
    return row


def agent_settings_create(*, user: Any) -> None:
    """A new account's settings: the site's defaults, stored as the account is made, so
    that later changes to the site's defaults are for new users only."""
    AgentSettings.objects.get_or_create(user=user, defaults=SiteDefaults.config().to_dict())


def agent_config_for(*, user: Any) -> AgentConfig:
    """The user's stored config (stored as their account was made). A read stores
    nothing: a user without a row gets the site's defaults."""
    row = AgentSettings.objects.filter(user=user).first()
    if row is None:  # an unsaved row: a model the operator no longer allows falls back too
        row = AgentSettings(user=user, **SiteDefaults.config().to_dict())
    return row.to_config()


def agent_config_update(*, user: Any, raw: Mapping[str, object]) -> AgentConfig:
    """Change the fields named in `raw` (strings, JSON values) and keep the others.

    Raises `agents.config.ConfigError` with {field: [messages]}, saving nothing,
    when any value is bad or any name is not a setting.
    """
    with transaction.atomic():
        row = _settings_row(user)
        config = config_from_raw(raw, base=row.to_config())
        row.set_config(config)
        row.save()
    return config


def agent_config_reset(*, user: Any) -> AgentConfig:
    """Put every field back to its default: the site's, where the operator set one."""
    with transaction.atomic():
        row = _settings_row(user)
        config = SiteDefaults.config()
        row.set_config(config)
        row.save()
    return config
