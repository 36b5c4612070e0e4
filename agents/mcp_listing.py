"""A server's tools as the model is offered them: listed page by page, left out when
their input schema is not one a provider takes, named `<server>__<tool>`."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from agents.mcp_config import SEPARATOR

MAX_TOOL_PAGES = 50  # tools/list pages read from one server, at most


def tool_name(server: str, tool: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """The name the model sees for `server`'s tool `tool`: `<server>__<tool>`.

    Characters function names do not allow become `_`. A name over 64 characters is
    cut to 55 and ends with `_` and 8 hex digits of a hash of the tool's own name, as
    is a name that another tool's name already took, so every name stays unique.
    """
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}{SEPARATOR}{tool}")
    if len(name) > 64 or name in taken:
        digest = hashlib.sha256(f"{server}/{tool}".encode()).hexdigest()[:8]
        name = f"{name[:55]}_{digest}"
    return name


def usable_tools(listed: list[Any]) -> tuple[list[Any], list[str]]:
    """The listed tools a model can be offered, and why each other one is left out."""
    usable, problems = [], []
    for tool in listed:
        problem = schema_problem(tool.input_schema)
        if problem is None:
            usable.append(tool)
        else:
            problems.append(f"tool {tool.name[:80]!r} left out: {problem}")
    return usable, problems


async def list_tools(client: Any) -> list[Any]:
    """Every tool the server lists, following its pages (`MAX_TOOL_PAGES` at most)."""
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def schema_problem(schema: object) -> str | None:
    """What makes `schema` unusable as a tool's parameters (None when it is usable)."""
    if not isinstance(schema, dict):
        return "its input schema is not an object"
    if schema.get("type", "object") != "object":
        return "its input schema does not describe an object"
    try:
        import jsonschema

        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as error:
        return f"its input schema is not valid JSON Schema ({error.message[:200]})"
    return None
