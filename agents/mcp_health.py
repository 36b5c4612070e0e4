"""How Oracle finds that an MCP server it holds is gone or hung, and says so (and why
one would not start); how a connection's owner is ended.

Gone: a stdio server's process exited (killed, crashed). The SDK marks the connection
closed when the server's output ends; `watch` notices within a fraction of a second,
so the server shows "stopped" at once, not at its next call.

Hung: a call cut short (its `timeout_seconds`, or Stop, the time limit, a pause) is
cancelled through the SDK, which tells the server (`notifications/cancelled`). A
server that honours it, or that is merely busy with that call in the background,
still answers other requests; one blocked by the call answers nothing, and every
later call would wait its whole timeout. `answers` asks it for its tools after the
cut: no answer within a short grace, and the server is restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from agents.mcp_config import McpServerConfig
from agents.mcp_errors import (
    CONNECTION_CLOSED,
    describe_error,
    error_code,
    innermost,
    is_connect_error,
)
from agents.mcp_sandbox import Sandbox

# How long a server whose call was cut has to answer another request before Oracle
# holds it hung and restarts it.
HANG_GRACE_SECONDS = 3.0
# How often a connection is looked at for a server that went away.
WATCH_SECONDS = 0.2


async def answers(client: Any, within: float) -> bool | None:
    """Whether the server of `client` answers a request within `within` seconds (an
    error is an answer); None when its connection is closed."""
    from mcp.shared.exceptions import MCPError

    try:
        async with asyncio.timeout(within):
            await client.list_tools(cache_mode="bypass")
    except TimeoutError:
        return False
    except MCPError as error:
        return None if error.code == CONNECTION_CLOSED else True
    except Exception:  # the transport itself broke
        return None
    return True


async def watch(alive: Callable[[], bool], closing: asyncio.Event) -> None:
    """Return when `closing` is set, or as soon as `alive()` says the connection ended."""
    while alive() and not closing.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(closing.wait(), WATCH_SECONDS)


def hung_reason(config: McpServerConfig, grace: float) -> str:
    """Why a server is restarting, after a cut call left it answering nothing."""
    return f"a call was cut short and it answered nothing within {grace:g} s after; " + (
        "Oracle restarts it" if config.transport == "stdio" else "Oracle connects again"
    )


def hung_message(config: McpServerConfig) -> str:
    """What a call still waiting on a server that was found hung is told."""
    again = "restarts it" if config.transport == "stdio" else "connects to it again"
    return (
        f"the MCP server {config.name!r} stopped answering (a call before this one hung "
        f"it), so Oracle {again}; this call was cut: it may be tried again"
    )


def gone_reason(config: McpServerConfig) -> str:
    """Why a server shows "stopped" when its connection ended by itself."""
    if config.transport == "stdio":
        return "its process exited (its error output is in Oracle's log); the next call starts it"
    return "its connection closed; the next call connects again"


def lost_message(config: McpServerConfig) -> str:
    """What a call is told when its server went away during it."""
    if config.transport == "stdio":
        return (
            f"the MCP server {config.name!r} stopped during the call; Oracle starts it "
            "again for the next one"
        )
    return (
        f"the MCP server {config.name!r} lost the connection (it may have restarted); "
        "Oracle connects again for the next call"
    )


async def session_gone(config: McpServerConfig, client: Any) -> bool:
    """Whether a remote server refuses the session itself, not just one call: one
    that restarted has forgotten it and answers every request of it with an error
    (404), so the connection must be made again. Asking for its tools tells which
    (not a ping: the protocol's newest version has none)."""
    if config.transport == "stdio":
        return False  # a stdio session ends only with its process (CONNECTION_CLOSED)
    from mcp.shared.exceptions import MCPError

    try:
        async with asyncio.timeout(min(5.0, config.timeout_seconds)):
            await client.list_tools(cache_mode="bypass")
    except (MCPError, OSError):
        return True
    except Exception:  # no answer in time: a busy server, not a lost one
        return False
    return False


def start_error(config: McpServerConfig, sandbox: Sandbox, error: BaseException) -> str:
    """Why the server did not start, in words an operator can act on."""
    inner = innermost(error)
    if error_code(inner) == CONNECTION_CLOSED:
        if config.transport == "stdio" and sandbox.contained:
            return (
                "it exited before answering, in its sandbox (bubblewrap); its error "
                "output, bubblewrap's included, is in Oracle's log"
            )
        if config.transport == "stdio":
            return "it exited before answering (its error output is in Oracle's log)"
        return "it closed the connection before answering"
    if config.transport != "stdio" and is_connect_error(inner):
        return f"nothing answers at {config.where} ({describe_error(inner)})"
    return config.without_secrets(describe_error(error))


async def end_owner(owner: asyncio.Task[None], closing: asyncio.Event) -> None:
    """Ask an owner to leave its client (the process ends), cancelling it if it won't."""
    closing.set()
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.shield(owner), 5.0)
    if not owner.done():
        owner.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(owner, 5.0)
