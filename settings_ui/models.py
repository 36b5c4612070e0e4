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
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual

from agents.config import FIELDS, FIELDS_BY_NAME, AgentConfig, FieldSpec, validate_config
from agents.subagents import AgentType
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
    if spec.kind == "text":
        return models.TextField(blank=True, **common)
    if spec.kind == "choice":
        return models.CharField(
            max_length=max(len(choice) for choice in spec.choices),
            choices=[(choice, choice) for choice in spec.choices],
            **common,
        )
    return models.CharField(max_length=255, blank=True, **common)


def _bounds(spec: FieldSpec, prefix: str) -> models.CheckConstraint:
    condition = models.Q(**{f"{spec.name}__gte": spec.min, f"{spec.name}__lte": spec.max})
    return models.CheckConstraint(condition=condition, name=f"{prefix}_{spec.name}_bounds")


def _constraint(spec: FieldSpec) -> models.CheckConstraint | None:
    if spec.kind in ("int", "float"):
        return _bounds(spec, "agent_settings")
    condition: models.Q | LessThanOrEqual
    if spec.kind == "choice":
        condition = models.Q(**{f"{spec.name}__in": list(spec.choices)})
    elif spec.kind == "text":
        condition = LessThanOrEqual(Length(spec.name), spec.max)
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


# The limits a subagent type has of its own: AgentConfig's fields, under their bounds.
AGENT_TYPE_FIELDS = (
    "max_iterations",
    "timeout_seconds",
    "token_budget",
    "max_cost_usd",
    "max_tool_calls_per_turn",
)


class AgentTypeLimits(models.Model):
    """One kind of subagent and its own limits (SPEC 6), edited by operators in the
    admin under the same bounds as AgentConfig (CHECK constraints and `clean`)."""

    name = models.SlugField(max_length=40, unique=True)
    description = models.CharField(max_length=200)
    enabled = models.BooleanField(default=True)

    class Meta:
        verbose_name = "subagent type"
        ordering = ("name",)
        constraints = [_bounds(FIELDS_BY_NAME[name], "agent_type") for name in AGENT_TYPE_FIELDS]

    def __str__(self) -> str:
        return self.name

    def limits(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in AGENT_TYPE_FIELDS}

    def to_agent_type(self) -> AgentType:
        limits = self.limits()
        return AgentType(
            name=self.name,
            description=self.description,
            max_tool_calls=limits.pop("max_tool_calls_per_turn"),
            **limits,
        )

    def clean(self) -> None:
        errors = validate_config(self.limits())
        if errors:
            raise ValidationError(errors)


for _name in AGENT_TYPE_FIELDS:
    AgentTypeLimits.add_to_class(_name, _column(FIELDS_BY_NAME[_name]))


# The limits of a new user's settings that an operator may set for the whole site (the
# dashboard's recommendations apply here); every other field starts at AgentConfig's.
SITE_DEFAULT_FIELDS = ("max_iterations", "token_budget")


class SiteDefaults(models.Model):
    """What a new user's settings start from, where the operator changed AgentConfig's
    defaults. One row at most (id 1); without it, AgentConfig's defaults hold. Users who
    have settings already keep theirs."""

    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "site defaults"
        verbose_name_plural = "site defaults"
        constraints = [
            models.CheckConstraint(condition=models.Q(id=1), name="site_defaults_one_row"),
            *(_bounds(FIELDS_BY_NAME[name], "site_defaults") for name in SITE_DEFAULT_FIELDS),
        ]

    def __str__(self) -> str:
        return "Site defaults"

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SITE_DEFAULT_FIELDS}

    @classmethod
    def config(cls) -> AgentConfig:
        """AgentConfig's defaults with the operator's site defaults over them."""
        row = cls.objects.filter(pk=1).first()
        return AgentConfig.from_raw(row.values()) if row else AgentConfig()


for _name in SITE_DEFAULT_FIELDS:
    SiteDefaults.add_to_class(_name, _column(FIELDS_BY_NAME[_name]))


class ModelWindow(models.Model):
    """A model's context window as a provider's refusal showed it: remembered across
    restarts and workers, so a refusal is met once per model. It wins over the operator's
    `ORACLE_MODEL_WINDOWS` and LiteLLM's table, being the provider's own word; delete it
    (the admin's "Model windows") after giving the server a larger context."""

    model = models.CharField(max_length=200, unique=True)
    tokens = models.PositiveIntegerField()
    # How the provider counts a prompt against Oracle's count of it (its tokenizer).
    ratio = models.FloatField(default=1.0)
    refusals = models.PositiveIntegerField(default=0)
    learned_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "model window"

    def __str__(self) -> str:
        return f"{self.model}: {self.tokens:,} tokens"
