"""What went wrong with an MCP server or a call, in one line an operator can read: the
SDK wraps its errors in (nested) exception groups, which are looked into here."""

from __future__ import annotations

from agents.tools import ToolError

CONNECTION_CLOSED = -32000  # the SDK's CONNECTION_CLOSED error code


class ServerUnavailable(ToolError):
    """The server cannot take calls now (it would not start, or is in its back-off)."""


def innermost(error: BaseException) -> BaseException:
    """The first exception inside the SDK's (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def error_code(error: BaseException) -> int | None:
    """The SDK's error code of `error` (None for any other exception)."""
    from mcp.shared.exceptions import MCPError

    return error.code if isinstance(error, MCPError) else None


def is_connect_error(error: BaseException) -> bool:
    """Whether `error` says nothing answered at the server's address."""
    import httpx2

    return isinstance(error, httpx2.ConnectError | ConnectionError)


def describe_error(error: BaseException) -> str:
    """One line for an exception, looking inside the SDK's exception groups."""
    error = innermost(error)
    text = str(error).strip() or type(error).__name__
    if isinstance(error, FileNotFoundError):
        text = f"the command was not found ({error.filename or text})"
    return text.splitlines()[0][:300]
