"""How Oracle reaches an MCP server: the SDK's client for its transport (a process it
starts over stdio, in its sandbox when there is one; Streamable HTTP or SSE), each
message of its answers read no further than ORACLE_TOOL_RESULT_MAX_BYTES (a stdio
server's by `agents.mcp_stdio`, a remote one's by `agents.mcp_http_bytes`), and what a
stdio server gets of Oracle's environment."""

from __future__ import annotations

import os
import sys
from contextlib import AsyncExitStack
from typing import Any

from agents.mcp_config import McpServerConfig
from agents.mcp_lines import DEFAULT_MAX_RESULT_BYTES
from agents.mcp_sandbox import NO_SANDBOX, Sandbox

# What a stdio server gets of Oracle's environment: enough to find programs and a home,
# nothing else (no SECRET_KEY, DATABASE_URL, provider keys...). Its config adds the rest.
BASE_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME")


def child_environment(config: McpServerConfig) -> dict[str, str]:
    """A stdio server's environment: the minimal base from Oracle's, then its config's."""
    base = {key: os.environ[key] for key in BASE_ENVIRONMENT if key in os.environ}
    return base | config.env


async def open_client(
    config: McpServerConfig,
    stack: AsyncExitStack,
    sandbox: Sandbox = NO_SANDBOX,
    *,
    max_bytes: int = DEFAULT_MAX_RESULT_BYTES,
) -> Any:
    """The SDK's client for `config`'s transport, not yet entered; an HTTP client it
    needs is entered on `stack`, a stdio server is started in `sandbox`, and no message
    of a server is read past `max_bytes` (an old SSE server's past 960 KiB either: the
    SDK reads no event past 1 MiB)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from agents.mcp_stdio import bounded_stdio_client

    info = client_info()
    if config.transport == "stdio":
        env = child_environment(config)
        command, args = sandbox.command(
            config.command, list(config.args), path=env.get("PATH"), cwd=config.cwd
        )
        params = StdioServerParameters(command=command, args=args, env=env, cwd=config.cwd)
        # The server's stderr goes to the process's own (a worker's log). Not sys.stderr:
        # Celery replaces it with a logging proxy, which has no file to hand a child.
        errlog = sys.__stderr__ if sys.__stderr__ is not None else sys.stderr
        transport = bounded_stdio_client(params, errlog, max_bytes=max_bytes)
        return Client(transport, client_info=info)
    import httpx2

    from agents.mcp_http_bytes import BoundedTransport, sse_cap

    if config.transport == "sse":
        from mcp.client.sse import sse_client

        def bounded_client(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                headers=headers,
                timeout=timeout if timeout is not None else httpx2.Timeout(30.0, read=300.0),
                auth=auth,
                transport=BoundedTransport(sse_cap(max_bytes)),
            )

        transport = sse_client(
            config.url, headers=config.headers, httpx_client_factory=bounded_client
        )
        return Client(transport, client_info=info, mode="legacy")
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(
        httpx2.AsyncClient(
            headers=config.headers,
            timeout=httpx2.Timeout(30.0, read=300.0),
            transport=BoundedTransport(max_bytes),
        )
    )
    # Oracle's transport bounds each event; the SDK's own limit (1 MiB) would end the
    # stream as if the connection were lost, so it only backs Oracle's up.
    transport = streamable_http_client(
        config.url, http_client=http, max_sse_event_size=2 * max_bytes + 64 * 1024
    )
    return Client(transport, client_info=info)


def client_info() -> Any:
    """How Oracle introduces itself to a server."""
    from mcp_types import Implementation

    return Implementation(name="oracle", version="0.1.0")
