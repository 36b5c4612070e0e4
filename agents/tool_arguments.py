"""A tool's parameters: read from a typed function's signature and docstring, or given
as a JSON Schema (an MCP tool's), and whether the model's arguments fit them."""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

JSON_TYPES: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


@dataclass(frozen=True)
class Param:
    """One parameter of a typed function: its name, its type and whether it has no default."""

    name: str
    kind: type
    required: bool


def schema_validator(schema: dict[str, Any]) -> Callable[[Mapping[str, Any]], str | None]:
    """A check of arguments against the JSON Schema `schema`: what is wrong, or None."""
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)

    def check(arguments: Mapping[str, Any]) -> str | None:
        error = jsonschema.exceptions.best_match(validator.iter_errors(dict(arguments)))
        if error is None:
            return None
        where = "/".join(str(part) for part in error.absolute_path)
        return f"{where}: {error.message}"[:500] if where else error.message[:500]

    return check


def fits(value: object, kind: type) -> bool:
    """Whether a JSON value is of the parameter type `kind` (a bool is no number)."""
    if value is None:
        return False
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def base_type(hint: Any) -> type:
    """The JSON-able type a parameter's type hint names (`X | None` is `X`)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(options) == 1:
            hint = options[0]
    if hint not in JSON_TYPES:
        raise TypeError(f"unsupported tool parameter type: {hint!r}")
    return typing.cast(type, hint)


def arg_descriptions(doc: str) -> dict[str, str]:
    """The parameters' descriptions: the `name: text` lines under a docstring's `Args:`."""
    descriptions: dict[str, str] = {}
    in_args = False
    for line in inspect.cleandoc(doc).splitlines():
        stripped = line.strip()
        if stripped == "Args:":
            in_args = True
        elif in_args and ":" in stripped:
            name, text = stripped.split(":", 1)
            descriptions[name.strip()] = text.strip()
        elif in_args and not stripped:
            in_args = False
    return descriptions


def too_large(size: int, limit: int) -> str:
    """What the model reads of a call refused for the size of its arguments: `size`
    bytes came (all of them, or as many as were read before Oracle stopped reading)."""
    return (
        f"Error: not run: this call's arguments are over the limit of {limit:,} bytes a "
        f"tool call may send ({size:,} bytes came). Send less in one call: split the work "
        "into several smaller calls, or point to the content (a document, a URL) instead "
        "of copying it into the arguments."
    )


def kept(arguments: str, limit: int) -> str:
    """A call's arguments as the run's history keeps them: themselves, or, over `limit`
    bytes (the call refused unread), a short note in their place, so that the next
    requests do not carry them again (a provider may refuse arguments cut mid-way)."""
    size = len(arguments.encode("utf-8", "surrogatepass"))
    if size <= limit:
        return arguments
    return json.dumps({"not_kept": f"{size:,} bytes of arguments, over the limit of {limit:,}"})
