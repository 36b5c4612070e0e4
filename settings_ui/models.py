"""Each user's AgentConfig, one row per user.

The columns, their defaults and their bounds are generated from
`agents.config.FIELDS`, the one declaration of the config. Columns rather than
a JSON blob, because then the database itself refuses an out-of-bounds value:
every bounded field gets a CHECK constraint, so no path that writes the row
(the page, the API, the admin, a shell, raw SQL) can store one. `clean()` runs
the engine's `validate_config`, so the admin shows the page's messages. When
the bounds in `agents/` change, `makemigrations` shows it as a new migration
(a test fails until it is written).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from agents.config import FIELDS, AgentConfig, FieldSpec, validate_config
from settings_ui.policy import allowed_models


def _column(spec: FieldSpec) -> models.Field[Any, Any]:
    # Labels and help texts stay out of the columns (the admin takes them from
    # FIELDS), so only a change of default, bound or choice needs a migration.
    common: dict[str, Any] = {"default": spec.default}
    if spec.kind == "int":
        return models.IntegerField(**common)
    if spec.kind == "float":
        return models.FloatField(**common)
    if spec.kind == "bool":
        return models.BooleanField(**common)
    if spec.kind == "choice":
        return models.CharField(
            max_length=max(len(choice) for choice in spec.choices),
            choices=[(choice, choice) for choice in spec.choices],
            **common,
        )
    return models.CharField(max_length=255, blank=True, **common)


def _constraint(spec: FieldSpec) -> models.CheckConstraint | None:
    if spec.kind in ("int", "float"):
        condition = models.Q(**{f"{spec.name}__gte": spec.min, f"{spec.name}__lte": spec.max})
    elif spec.kind == "choice":
        condition = models.Q(**{f"{spec.name}__in": list(spec.choices)})
    else:
        return None
    return models.CheckConstraint(condition=condition, name=f"agent_settings_{spec.name}_bounds")


class AgentSettings(models.Model):
    """One user's stored AgentConfig; read and write it through `settings_ui.services`."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_settings"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "agent settings"
        verbose_name_plural = "agent settings"
        constraints = [c for c in map(_constraint, FIELDS) if c is not None]

    def __str__(self) -> str:
        return f"Agent settings of {self.user}"

    def values(self) -> dict[str, Any]:
        """The stored value of every AgentConfig field."""
        return {spec.name: getattr(self, spec.name) for spec in FIELDS}

    def to_config(self) -> AgentConfig:
        """The stored config; a model the operator no longer allows becomes the default."""
        values = self.values()
        if values["model"] not in allowed_models():
            values["model"] = ""
        return AgentConfig.from_raw(values)

    def set_config(self, config: AgentConfig) -> None:
        """Copy every field of `config` onto the row (not saved)."""
        for name, value in config.to_dict().items():
            setattr(self, name, value)

    def clean(self) -> None:
        errors = validate_config(self.values(), allowed_models=allowed_models())
        if errors:
            raise ValidationError(errors)


for _spec in FIELDS:
    AgentSettings.add_to_class(_spec.name, _column(_spec))
