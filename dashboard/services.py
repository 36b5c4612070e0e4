"""Writes from the dashboard: a recommendation applied, an alert acknowledged."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from agents.config import ConfigError, validate_config
from agents.subagents import MAIN_AGENT
from dashboard.recommendations import Limits
from settings_ui.models import AgentTypeLimits, SiteDefaults


class UnknownAgentType(LookupError):
    """No subagent type has that name."""


def recommendation_apply(*, agent_type: str, limits: Limits) -> tuple[Limits, Limits]:
    """Set `agent_type`'s iteration limit and token budget: the main agent's are the
    settings new users start with (`SiteDefaults`), a subagent type's its own row.
    Returns the limits before and after. Raises `ConfigError` for a value out of
    AgentConfig's bounds and `UnknownAgentType`, saving nothing."""
    values = {"max_iterations": limits.max_iterations, "token_budget": limits.token_budget}
    errors = validate_config(values)
    if errors:
        raise ConfigError(errors)
    with transaction.atomic():
        row: SiteDefaults | AgentTypeLimits | None
        if agent_type == MAIN_AGENT:
            row, _ = SiteDefaults.objects.select_for_update().get_or_create(pk=1)
        else:
            row = AgentTypeLimits.objects.select_for_update().filter(name=agent_type).first()
            if row is None:
                raise UnknownAgentType(f"There is no subagent type {agent_type!r}.")
        before = Limits(**{name: getattr(row, name) for name in values})
        for name, value in values.items():
            setattr(row, name, value)  # columns made from AgentConfig's FIELDS
        row.save(update_fields=list(values))
    return before, limits


def alert_acknowledge(*, alert_id: int, user: Any) -> bool:
    """Mark one of ops' alerts acknowledged by `user`; False when there is no such alert
    (or ops has no alerts)."""
    try:
        from ops.models import Alert
    except ImportError:  # pragma: no cover - an install without ops' alerts
        return False
    alert = Alert.objects.filter(pk=alert_id).first()
    if alert is None:
        return False
    alert.acknowledge(by=user)
    return True
