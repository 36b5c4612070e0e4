"""AgentConfig: the user's limits for a run, declared once (SPEC section 2).

Every layer (the engine, the settings form, the API, the CLI) reads the fields,
defaults and bounds from `FIELDS`, validates with `validate_config` and builds
an `AgentConfig` with `AgentConfig.from_raw`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any, Literal


class LimitAction(StrEnum):
    """What happens when a hard limit is reached (SPEC section 5)."""

    STOP = "stop"
    PAUSE = "pause"
    EXTEND = "extend"
    WARN = "warn"


FieldKind = Literal["str", "int", "float", "bool", "choice"]


@dataclass(frozen=True)
class FieldSpec:
    """One AgentConfig field: its type, default, bounds and help text."""

    name: str
    kind: FieldKind
    default: Any
    label: str
    help_text: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec(
        "model",
        "str",
        "",
        "Model",
        "A LiteLLM model string from the operator's list; empty means the server default.",
    ),
    FieldSpec(
        "max_iterations",
        "int",
        15,
        "Max iterations",
        "Model calls per round of a run. The last one answers without tools. The warning "
        "comes at least two calls ahead from 3 up; with 2 it comes with the last call, with 1 "
        "there is none (the one call is the answer).",
        min=1,
        max=50,
    ),
    FieldSpec(
        "unlimited_iterations",
        "bool",
        False,
        "Unlimited iterations",
        "No iteration limit; the operator's hard cap still applies.",
    ),
    FieldSpec(
        "soft_warning_percent",
        "int",
        70,
        "Soft warning (%)",
        "Warn at this share of the iteration, tool-call, time and cost limits (for "
        "iterations, two before the limit if that is earlier). Once per round and limit.",
        min=10,
        max=100,
    ),
    FieldSpec(
        "token_budget",
        "int",
        50_000,
        "Token budget",
        "Prompt and completion tokens of a run, subagents included.",
        min=1_000,
        max=200_000,
    ),
    FieldSpec(
        "token_warning_percent",
        "int",
        80,
        "Token warning (%)",
        "Warn at this share of the token budget.",
        min=10,
        max=100,
    ),
    FieldSpec(
        "timeout_seconds",
        "int",
        120,
        "Timeout (seconds)",
        "Wall time of a run; time spent paused does not count.",
        min=10,
        max=600,
    ),
    FieldSpec(
        "max_tool_calls_per_turn",
        "int",
        30,
        "Max tool calls",
        "Tool calls per run, each call counted.",
        min=1,
        max=100,
    ),
    FieldSpec(
        "max_parallel_tools",
        "int",
        3,
        "Parallel tools",
        "Tool calls of one model response that run at once.",
        min=1,
        max=10,
    ),
    FieldSpec(
        "max_cost_usd",
        "float",
        1.00,
        "Max cost (USD)",
        "Priced with LiteLLM's model prices; a model without a price costs 0.",
        min=0.01,
        max=100.00,
    ),
    FieldSpec(
        "limit_action",
        "choice",
        LimitAction.STOP.value,
        "At a limit",
        "stop, pause, extend or warn.",
        choices=tuple(action.value for action in LimitAction),
    ),
    FieldSpec(
        "extend_multiplier",
        "int",
        4,
        "Extend multiplier",
        "For extend: the iteration ceiling is multiplied by this.",
        min=2,
        max=10,
    ),
    FieldSpec(
        "max_extensions",
        "int",
        1,
        "Max extensions",
        "For extend: how many times the ceiling may be raised.",
        min=1,
        max=5,
    ),
    FieldSpec(
        "no_progress_repeats",
        "int",
        3,
        "No-progress repeats",
        "Identical consecutive actions that mean the Oracle is stuck.",
        min=2,
        max=10,
    ),
    FieldSpec(
        "max_consecutive_tool_errors",
        "int",
        3,
        "Consecutive tool errors",
        "Tool errors in a row that end the run.",
        min=1,
        max=10,
    ),
)

FIELDS_BY_NAME: dict[str, FieldSpec] = {spec.name: spec for spec in FIELDS}

ConfigErrors = dict[str, list[str]]

_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
_DECIMAL_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


class ConfigError(ValueError):
    """Raised by `AgentConfig.from_raw` with one message per bad field."""

    def __init__(self, errors: ConfigErrors) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in errors.items()))


@dataclass(frozen=True)
class AgentConfig:
    """The limits one run works under. Build it with `from_raw` to get validation."""

    model: str = ""
    max_iterations: int = 15
    unlimited_iterations: bool = False
    soft_warning_percent: int = 70
    token_budget: int = 50_000
    token_warning_percent: int = 80
    timeout_seconds: int = 120
    max_tool_calls_per_turn: int = 30
    max_parallel_tools: int = 3
    max_cost_usd: float = 1.00
    limit_action: LimitAction = LimitAction.STOP
    extend_multiplier: int = 4
    max_extensions: int = 1
    no_progress_repeats: int = 3
    max_consecutive_tool_errors: int = 3

    @classmethod
    def from_raw(
        cls,
        raw: Mapping[str, object],
        *,
        base: AgentConfig | None = None,
        allowed_models: Sequence[str] | None = None,
    ) -> AgentConfig:
        """Build a config from raw values (form strings, JSON, flags) over `base`.

        Raises `ConfigError` carrying {field: [message]} when any value is bad.
        """
        values, errors = _parse(raw, allowed_models)
        if errors:
            raise ConfigError(errors)
        return replace(base or cls(), **values)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        data = asdict(self)
        data["limit_action"] = self.limit_action.value
        return data


def validate_config(
    raw: Mapping[str, object], *, allowed_models: Sequence[str] | None = None
) -> ConfigErrors:
    """Return {field: [messages]} for every bad value in `raw`; empty when all are good."""
    return _parse(raw, allowed_models)[1]


def _parse(
    raw: Mapping[str, object], allowed_models: Sequence[str] | None
) -> tuple[dict[str, Any], ConfigErrors]:
    values: dict[str, Any] = {}
    errors: ConfigErrors = {}
    for name, value in raw.items():
        spec = FIELDS_BY_NAME.get(name)
        if spec is None:
            errors[name] = ["Unknown setting."]
            continue
        try:
            values[name] = _parse_value(spec, value, allowed_models)
        except ValueError as error:
            errors[name] = [str(error)]
    return values, errors


def _parse_value(spec: FieldSpec, value: object, allowed_models: Sequence[str] | None) -> Any:
    if spec.kind == "str":
        text = "" if value is None else str(value).strip()
        if text and allowed_models is not None and text not in allowed_models:
            if not allowed_models:
                raise ValueError("Only the server's default model is available here.")
            raise ValueError(f"Must be one of the allowed models: {', '.join(allowed_models)}.")
        return text
    if spec.kind == "bool":
        return _parse_bool(value)
    if spec.kind == "choice":
        text = str(value).strip().lower()
        if text not in spec.choices:
            raise ValueError(f"Must be one of: {', '.join(spec.choices)}.")
        return LimitAction(text) if spec.name == "limit_action" else text
    number: float = _parse_int(value) if spec.kind == "int" else _parse_float(value)
    assert spec.min is not None and spec.max is not None
    if not spec.min <= number <= spec.max:
        raise ValueError(f"Must be between {_show(spec, spec.min)} and {_show(spec, spec.max)}.")
    return number


def _parse_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError("Must be true or false.")


def _parse_int(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError("Must be a whole number.")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    text = str(value).strip()
    # int() would also take "1_000" and non-ASCII digits; a form field should not.
    if not _WHOLE_NUMBER.fullmatch(text):
        raise ValueError("Must be a whole number.")
    return int(text)


def _parse_float(value: object) -> float:
    if isinstance(value, bool):
        raise ValueError("Must be a number.")
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # too large for a float: out of every bound, said as such
            return math.inf if value > 0 else -math.inf
    if isinstance(value, float):
        number = value
    else:
        text = str(value).strip()
        if not _DECIMAL_NUMBER.fullmatch(text):
            raise ValueError("Must be a number.")
        number = float(text)
    if not math.isfinite(number):
        raise ValueError("Must be a number.")
    return number


def _show(spec: FieldSpec, bound: float) -> str:
    """A bound as the user types it: money with cents, counts whole."""
    return f"{bound:,.2f}" if spec.kind == "float" else f"{int(bound):,}"


def field_names() -> list[str]:
    """Names of every AgentConfig field, in declaration order."""
    return [f.name for f in fields(AgentConfig)]


@dataclass(frozen=True)
class OperatorLimits:
    """Hard caps set by the operator; they end a run even under `warn` or unlimited.

    `max_cost_usd` may be what is left of a spending cap larger than one run (a daily
    one, for the user or the site): `cost_cap_name` then says which, for the System
    message ("the daily spending cap for your account ($2.00)"), and `cost_cap_note`
    when it renews ("it resets at 00:00 UTC"). Empty: the per-run cap, in the usual words.
    """

    max_iterations: int = 200
    max_tool_calls: int = 1_000
    token_budget: int = 2_000_000
    timeout_seconds: float = 3_600
    max_cost_usd: float = 100.0
    cost_cap_name: str = ""
    cost_cap_note: str = ""
