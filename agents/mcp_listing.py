"""A server's tools as the model is offered them: listed page by page up to the
operator's cap, left out when their input schema is not one a provider takes or is
too big, named `<server>__<tool>`."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from agents.mcp_config import SEPARATOR

MAX_TOOL_PAGES = 50  # tools/list pages read from one server, at most
DEFAULT_MAX_TOOLS = 100  # ORACLE_MCP_MAX_TOOLS_PER_SERVER
DEFAULT_MAX_SCHEMA_BYTES = 64 * 1024  # ORACLE_MCP_MAX_SCHEMA_BYTES


@dataclass(frozen=True)
class ListingCaps:
    """How much of one server's listing is offered: its first `max_tools` usable tools,
    each of at most `max_schema_bytes` (its description and input schema, as JSON).
    Every offered tool's schema goes with every model call: one server listing
    thousands would spend a run's whole token budget before its first word."""

    max_tools: int = DEFAULT_MAX_TOOLS
    max_schema_bytes: int = DEFAULT_MAX_SCHEMA_BYTES


DEFAULT_CAPS = ListingCaps()


@dataclass
class Listing:
    """The tools a server listed, and whether it had more pages than were read."""

    tools: list[Any]
    more: bool = False


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


def usable_tools(
    listed: list[Any] | Listing, caps: ListingCaps = DEFAULT_CAPS
) -> tuple[list[Any], list[str]]:
    """The listed tools a model can be offered, and why each other one is left out:
    a schema a provider would refuse, one over the size cap, any past the count cap."""
    listing = listed if isinstance(listed, Listing) else Listing(list(listed))
    usable: list[Any] = []
    problems: list[str] = []
    cut = listing.more
    for tool in listing.tools:
        if len(usable) == caps.max_tools:
            cut = True
            break  # those past the cap are not offered: not checked either
        problem = size_problem(tool, caps.max_schema_bytes) or schema_problem(tool.input_schema)
        if problem is None:
            usable.append(tool)
        else:
            problems.append(f"tool {tool.name[:80]!r} left out: {problem}")
    if cut:
        listed_count = f"{len(listing.tools):,} tools listed"
        if listing.more:
            listed_count = f"over {listed_count} (Oracle read no further)"
        offered = f"the first {caps.max_tools:,} are offered (ORACLE_MCP_MAX_TOOLS_PER_SERVER)"
        problems.insert(0, f"{listed_count}: {offered}")
    return usable, problems


async def list_tools(client: Any, caps: ListingCaps = DEFAULT_CAPS) -> Listing:
    """The tools the server lists, following its pages (`MAX_TOOL_PAGES` at most) until
    more than `caps.max_tools` are read: those past the cap would not be offered."""
    listing = Listing([])
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        listing.tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
        if len(listing.tools) > caps.max_tools:
            listing.more = True
            break
    return listing


def size_problem(tool: Any, max_bytes: int) -> str | None:
    """Why `tool` is too big to offer (its description and input schema, as JSON, over
    `max_bytes`), or None."""
    size = len(json.dumps([tool.description or "", tool.input_schema]).encode())
    if size <= max_bytes:
        return None
    return f"its schema is {size:,} bytes, over ORACLE_MCP_MAX_SCHEMA_BYTES ({max_bytes:,})"


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
