"""The caps on what one MCP server may offer (ORACLE_MCP_MAX_*): its first tools only,
each of a bounded size. Every offered tool's description and schema go with every model
call, so a server listing thousands would spend each run's token budget before its
first word. The defaults are the engine's own (agents.mcp_listing.ListingCaps)."""

from __future__ import annotations

import environ
from django.core.exceptions import ImproperlyConfigured

from agents.mcp_listing import ListingCaps

# Less than this and an ordinary tool (a few parameters, a paragraph) would be left out.
MIN_SCHEMA_BYTES = 1_024


def mcp_caps(env: environ.Env) -> tuple[int, int]:
    """ORACLE_MCP_MAX_TOOLS_PER_SERVER and ORACLE_MCP_MAX_SCHEMA_BYTES; a bad value is
    refused, its name given."""
    defaults = ListingCaps()
    values = []
    for name, default, least in (
        ("ORACLE_MCP_MAX_TOOLS_PER_SERVER", defaults.max_tools, 1),
        ("ORACLE_MCP_MAX_SCHEMA_BYTES", defaults.max_schema_bytes, MIN_SCHEMA_BYTES),
    ):
        try:
            value = env.int(name, default=default)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be a whole number.") from None
        if value < least:
            raise ImproperlyConfigured(f"{name} must be at least {least:,}.")
        values.append(value)
    return values[0], values[1]
