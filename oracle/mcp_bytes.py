"""How much of one MCP message a worker reads (ORACLE_TOOL_RESULT_MAX_BYTES): past it,
a stdio server's answer is no longer read, and the model is told it was cut. It bounds
the memory and time one result can cost a worker every run shares. The default is the
engine's own (agents.mcp_lines)."""

from __future__ import annotations

import environ
from django.core.exceptions import ImproperlyConfigured

from agents.mcp_lines import DEFAULT_MAX_RESULT_BYTES

# Less than this and an ordinary server's list of tools would no longer be read.
MIN_RESULT_BYTES = 64 * 1024


def tool_result_max_bytes(env: environ.Env) -> int:
    """ORACLE_TOOL_RESULT_MAX_BYTES in bytes; anything but a whole number of at least
    64 KiB is refused, its name given."""
    raw = env.str("ORACLE_TOOL_RESULT_MAX_BYTES", default=str(DEFAULT_MAX_RESULT_BYTES))
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < MIN_RESULT_BYTES:
        raise ImproperlyConfigured(
            "ORACLE_TOOL_RESULT_MAX_BYTES must be a whole number of bytes, at least "
            f"{MIN_RESULT_BYTES:,} (64 KiB), not {raw!r}."
        )
    return value
