"""Writes (and the first read) of a user's AgentConfig. The chat task and the CLI call these."""

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
    "operator_limits",
]


def _settings_row(user: Any, *, for_update: bool = False) -> AgentSettings:
    rows = AgentSettings.objects.select_for_update() if for_update else AgentSettings.objects
    try:
        return rows.get(user=user)
    except AgentSettings.DoesNotExist:  # a new user starts from the site's defaults
        row, _ = rows.get_or_create(user=user, defaults=SiteDefaults.config().to_dict())
        return row


def agent_config_for(*, user: Any) -> AgentConfig:
    """The user's stored config; the first call stores the defaults."""
    return _settings_row(user).to_config()


def agent_config_update(*, user: Any, raw: Mapping[str, object]) -> AgentConfig:
    """Change the fields named in `raw` (strings, JSON values) and keep the others.

    Raises `agents.config.ConfigError` with {field: [messages]}, saving nothing,
    when any value is bad or any name is not a setting.
    """
    with transaction.atomic():
        row = _settings_row(user, for_update=True)
        config = config_from_raw(raw, base=row.to_config())
        row.set_config(config)
        row.save()
    return config


def agent_config_reset(*, user: Any) -> AgentConfig:
    """Put every field back to its default: the site's, where the operator set one."""
    with transaction.atomic():
        row = _settings_row(user, for_update=True)
        config = SiteDefaults.config()
        row.set_config(config)
        row.save()
    return config
