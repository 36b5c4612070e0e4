"""Raw settings values (form strings, JSON, flags) checked against their fields.

`validate_config` says what is wrong with each bad value, in words the settings page
shows under its field; `AgentConfig.from_raw` builds a config from the good ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agents.config_fields import FIELDS_BY_NAME, FieldSpec, LimitAction

ConfigErrors = dict[str, list[str]]

_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
# Control characters other than tab and new line, and lone surrogates (JSON can send
# them): a database may refuse them (PostgreSQL refuses NUL), and no one types them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
_DECIMAL_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


class ConfigError(ValueError):
    """Raised by `AgentConfig.from_raw` with one message per bad field."""

    def __init__(self, errors: ConfigErrors) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in errors.items()))


def validate_config(
    raw: Mapping[str, object], *, allowed_models: Sequence[str] | None = None
) -> ConfigErrors:
    """Return {field: [messages]} for every bad value in `raw`; empty when all are good."""
    return parse_values(raw, allowed_models)[1]


def parse_values(
    raw: Mapping[str, object], allowed_models: Sequence[str] | None
) -> tuple[dict[str, Any], ConfigErrors]:
    """The good values of `raw`, parsed, and {field: [messages]} for the bad ones."""
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
    if spec.kind == "text":
        return _parse_text(spec, value)
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


def _parse_text(spec: FieldSpec, value: object) -> str:
    """Free text: blank is none; line ends as "\n" (a form posts "\r\n"), so the length
    counted is the one the page shows."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError("Must be text.")
    text = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    if _CONTROL.search(text):
        raise ValueError("Must be plain text, without control characters.")
    assert spec.max is not None
    if len(text) > spec.max:
        raise ValueError(f"Must be at most {int(spec.max):,} characters (this is {len(text):,}).")
    return text


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
