"""The settings form: one control per AgentConfig field, validated by the engine's rules.

Every field arrives as text (or is missing: an unchecked checkbox) and is handed
to `AgentConfig.from_raw`, so the page says exactly what the API and the CLI say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django import forms

from agents.config import FIELDS, FIELDS_BY_NAME, AgentConfig, ConfigError, FieldSpec, LimitAction
from settings_ui.models import SiteDefaults
from settings_ui.policy import config_from_raw, model_option, operator_limits
from settings_ui.selectors import model_choices

# How the page groups the fields; a field missing here is shown under "Other".
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Model", ("model",)),
    ("Iterations", ("max_iterations", "unlimited_iterations", "soft_warning_percent")),
    ("Tokens", ("token_budget", "token_warning_percent", "context_compact_percent")),
    ("Time and tools", ("timeout_seconds", "max_tool_calls_per_turn", "max_parallel_tools")),
    ("Cost", ("max_cost_usd",)),
    ("Limit action", ("limit_action", "extend_multiplier", "max_extensions")),
    ("When the Oracle is stuck", ("no_progress_repeats", "max_consecutive_tool_errors")),
    ("Custom instructions", ("custom_instructions",)),
)
# Shown only while the limit action is `extend`.
EXTEND_FIELDS = frozenset({"extend_multiplier", "max_extensions"})

LIMIT_ACTION_SENTENCES: dict[str, str] = {
    LimitAction.STOP: "The Oracle wraps up, the run stops, and a Continue button lets you "
    "give it another round.",
    LimitAction.PAUSE: "The run is saved and waits for you: Continue gives it another round, "
    "Stop ends it.",
    LimitAction.EXTEND: "The iteration limit is raised by the multiplier below, at most the "
    "number of times below; after that the run stops.",
    LimitAction.WARN: "You get a warning and the Oracle keeps going; only the operator's hard "
    "caps stop it.",
}


def bounds_text(spec: FieldSpec) -> str:
    """'1 to 50' or '0.01 to 100.00' with an en dash, formatted like the engine's messages."""
    assert spec.min is not None and spec.max is not None
    return f"{_number(spec.min, spec)}\N{EN DASH}{_number(spec.max, spec)}"


def _number(value: float, spec: FieldSpec) -> str:
    if spec.kind == "float":
        return f"{value:,.2f}" if round(value, 2) == value else f"{value:,}"
    return f"{int(value):,}"


def _input_text(value: object, spec: FieldSpec) -> str:
    """A stored value as the text of its input (no thousands separators)."""
    if spec.kind == "float":
        number = float(value)  # type: ignore[arg-type]
        return f"{number:.2f}" if round(number, 2) == number else repr(number)
    if spec.kind == "bool":
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class SettingControl:
    """Everything the template needs to draw one field."""

    spec: FieldSpec
    value: str
    checked: bool
    errors: list[str]
    help: str
    choices: list[tuple[str, str]]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def widget(self) -> str:
        if self.spec.kind == "bool":
            return "checkbox"
        if self.spec.kind in ("choice", "str"):
            return "select"
        if self.spec.kind == "text":
            return "textarea"
        return "number"

    @property
    def step(self) -> str:
        return "0.01" if self.spec.kind == "float" else "1"

    @property
    def is_extend_field(self) -> bool:
        return self.name in EXTEND_FIELDS


class AgentConfigForm(forms.Form):
    """The whole config, or (`only`) some of its fields, as posted by the settings page."""

    def __init__(
        self,
        data: Any = None,
        *,
        config: AgentConfig,
        only: Sequence[str] | None = None,
        defaults: AgentConfig | None = None,
    ) -> None:
        super().__init__(data)
        self.config = config
        self.defaults = defaults or SiteDefaults.config()  # what Reset puts back
        for spec in FIELDS:
            if only is None or spec.name in only:
                self.fields[spec.name] = forms.CharField(
                    required=False, strip=False, label=spec.label
                )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        try:
            self.new_config = config_from_raw(self.raw(), base=self.config)
        except ConfigError as error:
            for name, messages in error.errors.items():
                self.add_error(name, messages)
        return cleaned

    def raw(self) -> dict[str, str]:
        """The posted text of each field; a missing checkbox is "" (false)."""
        return {name: self.cleaned_data.get(name, "") for name in self.fields}

    def control(self, name: str) -> SettingControl:
        spec = FIELDS_BY_NAME[name]
        stored = self.config.to_dict()[name]
        if self.is_bound:
            value = self.data.get(name, "")
            checked = value.strip().lower() in {"1", "true", "yes", "on"}
        else:
            value = _input_text(stored, spec)
            checked = bool(stored)
        if spec.kind == "str":
            value, choices = model_option(value), model_choices()
        elif spec.kind == "choice":
            choices = [(choice, choice.capitalize()) for choice in spec.choices]
        else:
            choices = []
        return SettingControl(
            spec=spec,
            value=value,
            checked=checked,
            # An ErrorList yields its messages as text (the stubs say ValidationError too).
            errors=[str(e) for e in self.errors.get(name, [])] if self.is_bound else [],
            help=field_help(spec, getattr(self.defaults, name)),
            choices=choices,
        )

    def groups(self) -> list[tuple[str, list[SettingControl]]]:
        listed = {name for _, names in GROUPS for name in names}
        groups = [*GROUPS, ("Other", tuple(s.name for s in FIELDS if s.name not in listed))]
        return [
            (title, [self.control(name) for name in names if name in self.fields])
            for title, names in groups
            if any(name in self.fields for name in names)
        ]


def field_help(spec: FieldSpec, default: Any = None) -> str:
    """The help text of a field with its bounds, its default (AgentConfig's unless
    told: the site's) and any operator cap."""
    text = spec.help_text
    if spec.kind in ("int", "float"):
        default = spec.default if default is None else default
        text += f" {bounds_text(spec)}; default {_number(default, spec)}."
    if spec.kind == "text":
        assert spec.max is not None
        text += f" Up to {int(spec.max):,} characters."
    if spec.name == "unlimited_iterations":
        text += f" (The hard cap is {operator_limits().max_iterations:,} iterations.)"
    return text
