"""The MCP servers of this process: one `McpHub` per event loop that runs agents (a
worker's run host, or one `ask`), started on first use and kept for every later run.

The worker records what it found of each server (`McpServerStatus`) for the pages,
the API and `/healthz`, which run in the web process and start no server themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Collection
from functools import cache

from django.conf import settings

from agents.mcp import NO_SANDBOX, ListingCaps, McpHub, McpTool
from agents.mcp_config import McpConfig, load_mcp_config
from toolbox.sandbox import configured_sandbox

logger = logging.getLogger(__name__)


@cache
def configured() -> McpConfig:
    """The servers ORACLE_MCP_SERVERS names (read once per process), and its problems."""
    config = load_mcp_config(settings.ORACLE_MCP_SERVERS)
    for problem in config.problems:
        logger.warning("%s", problem)
    return config


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[McpHub, asyncio.Task[None]]]
_hubs = weakref.WeakKeyDictionary()


def new_hub(only: Collection[str] | None = None) -> McpHub:
    """A hub of the configured servers (of `only`, when given), not started; its tools
    take names no built-in tool has, and its stdio servers start in the sandbox."""
    from runs.tools import builtin_names

    servers = [s for s in configured().servers if only is None or s.name in only]
    started = any(s.transport == "stdio" and s.enabled for s in servers)
    return McpHub(
        servers,
        max_result_chars=settings.ORACLE_TOOL_RESULT_MAX_CHARS,
        max_result_bytes=settings.ORACLE_TOOL_RESULT_MAX_BYTES,
        max_result_bytes=settings.ORACLE_TOOL_RESULT_MAX_BYTES,
        reserved=frozenset(builtin_names()),
        sandbox=configured_sandbox()[0] if started else NO_SANDBOX,
        caps=ListingCaps(
            settings.ORACLE_MCP_MAX_TOOLS_PER_SERVER, settings.ORACLE_MCP_MAX_SCHEMA_BYTES
        ),
    )


async def process_hub() -> McpHub:
    """This loop's hub, its servers started (once: later calls return it at once)."""
    loop = asyncio.get_running_loop()
    if loop not in _hubs:
        hub = new_hub()
        _hubs[loop] = (hub, loop.create_task(_start(hub)))
    hub, started = _hubs[loop]
    await asyncio.shield(started)
    return hub


async def _start(hub: McpHub) -> None:
    if not hub.servers:
        return
    await hub.start()
    for row in hub.status():
        if row["state"] == "failed":
            logger.error("MCP server %r did not start: %s", row["name"], row["error"])
        else:
            logger.info("MCP server %r: %s, %d tools", row["name"], row["state"], row["tools"])
    await publish(hub)


async def close_process_hub() -> None:
    """Close this loop's hub (the worker is stopping): its stdio servers end."""
    entry = _hubs.pop(asyncio.get_running_loop(), None)
    if entry is not None:
        hub, started = entry
        with contextlib.suppress(BaseException):
            await started
        await hub.close()


_published: dict[int, list[dict[str, object]]] = {}


async def publish(hub: McpHub) -> None:
    """Record the servers' states and tools when they changed since last recorded."""
    rows = hub.status()
    if _published.get(id(hub)) == rows:
        return
    _published[id(hub)] = rows
    tools = hub.tools()
    from runs.live import with_fresh_connection

    try:
        await asyncio.to_thread(with_fresh_connection, record_status, rows, tools)
    except Exception:  # the database is away: the next change records it
        _published.pop(id(hub), None)
        logger.warning("could not record the MCP servers' state", exc_info=True)


def record_status(rows: list[dict[str, object]], tools: list[McpTool]) -> None:
    """Write each server's row (and drop those of servers no longer configured)."""
    from toolbox.models import McpServerStatus

    for row in rows:
        name = str(row["name"])
        McpServerStatus.objects.update_or_create(
            name=name,
            defaults={
                "transport": str(row["transport"]),
                "state": str(row["state"]),
                "error": str(row["error"]),
                "problems": row["problems"],
                "tools": [
                    {
                        "name": tool.name,
                        "tool": tool.tool,
                        "description": tool.description,
                        "parameters": tool.input_schema,  # its share of each call's tokens
                        "approval": tool.needs_approval,
                        "why": tool.why,
                        "annotations": tool.annotations,
                        "grant": list(tool.grant),
                    }
                    for tool in tools
                    if tool.server == name
                ],
            },
        )
    McpServerStatus.objects.exclude(name__in=[row["name"] for row in rows]).delete()
