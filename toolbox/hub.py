"""The MCP servers of this process: one `McpHub` per event loop that runs agents (a
worker's run host, or one `ask`), started on first use and kept for every later run.

A worker's servers start in the background, each on its own: a run is offered the
tools of the servers ready when it starts, and told which were still starting. Each
server's state is recorded (`McpServerStatus`, one row a worker a server) the moment
it changes, for the pages, the API and `/healthz`, which run in the web process and
start no server themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Collection
from functools import cache

from django.conf import settings

from agents.events import Event, EventSink, EventType
from agents.mcp import NO_SANDBOX, ListingCaps, McpHub, McpServer, McpTool
from agents.mcp_config import McpConfig, load_mcp_config
from ops.heartbeat import worker_name
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
        reserved=frozenset(builtin_names()),
        sandbox=configured_sandbox()[0] if started else NO_SANDBOX,
        caps=ListingCaps(
            settings.ORACLE_MCP_MAX_TOOLS_PER_SERVER, settings.ORACLE_MCP_MAX_SCHEMA_BYTES
        ),
    )


async def process_hub() -> McpHub:
    """This loop's hub, its servers starting in the background (once: later calls return
    it as it is). Each change of a server's state is recorded as it happens."""
    loop = asyncio.get_running_loop()
    if loop not in _hubs:
        hub = new_hub()
        changed = asyncio.Event()
        hub.on_change = lambda server: _changed(server, changed)
        _hubs[loop] = (hub, loop.create_task(_publish_changes(hub, changed)))
        hub.launch()
    return _hubs[loop][0]


def _changed(server: McpServer, changed: asyncio.Event) -> None:
    if server.state == "failed":
        logger.error("MCP server %r did not start: %s", server.name, server.error)
    else:
        logger.info("MCP server %r: %s, %d tools", server.name, server.state, len(server.usable))
    changed.set()


async def _publish_changes(hub: McpHub, changed: asyncio.Event) -> None:
    """Record the hub's servers each time one changes (a burst of changes, once)."""
    while True:
        await changed.wait()
        changed.clear()
        await publish(hub)


async def close_process_hub() -> None:
    """Close this loop's hub (the worker is stopping): its stdio servers end."""
    entry = _hubs.pop(asyncio.get_running_loop(), None)
    if entry is not None:
        hub, publishing = entry
        publishing.cancel()
        with contextlib.suppress(BaseException):
            await publishing
        await hub.close()


def starting_notice(hub: McpHub | None, servers: Collection[str]) -> Event | None:
    """The notice of a run that starts without the tools of `servers` still starting."""
    waiting = hub.starting(servers) if hub is not None else []
    if not waiting:
        return None
    names = ", ".join(repr(name) for name in waiting)
    return {
        "type": EventType.SYSTEM_NOTICE,
        "severity": "info",
        "text": f"The MCP server{'s' if len(waiting) > 1 else ''} {names} "
        f"{'were' if len(waiting) > 1 else 'was'} still starting: this run goes on without "
        "its tools; the next run has them once it is ready.",
    }


def with_notice(sink: EventSink, notice: Event | None) -> EventSink:
    """`sink`, which is handed `notice` just after the run's first event (its start)."""
    if notice is None:
        return sink
    pending = [notice]

    async def noting(event: Event) -> None:
        await sink(event)
        while pending:
            await sink(pending.pop())

    return noting


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
        worker = worker_name()
        await asyncio.to_thread(with_fresh_connection, record_status, rows, tools, worker)
    except Exception:  # the database is away: the next change records it
        _published.pop(id(hub), None)
        logger.warning("could not record the MCP servers' state", exc_info=True)


def record_status(rows: list[dict[str, object]], tools: list[McpTool], worker: str = "") -> None:
    """Write `worker`'s row of each server (see `toolbox.states`)."""
    from toolbox.states import record_status as record

    record(rows, tools, worker)
