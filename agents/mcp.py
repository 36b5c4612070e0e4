"""Tools from MCP servers, through the official SDK (`mcp`): connections and tool calls.

A `McpHub` holds one connection per configured server on the event loop that uses
it (a worker's run host, or one `ask`): a stdio server is started once and every
run of the process calls it, not one process per call. A server that died is
started again on the next call (at once the first time, then after a growing
back-off while it keeps failing); the call that was running when it died is a
tool error. Each call has the server's ceiling (`timeout_seconds`); a call cut
short by Stop, the time limit or a pause is cancelled through the SDK, which tells
the server (`notifications/cancelled`), and the connection stays usable.

The model sees a server's tools as `<server>__<tool>` (see `tool_name`), described
by the server's own description and JSON Schema. A tool whose schema is not valid
JSON Schema is left out (a provider refuses a request carrying it, which would break
every run), and so noted on the server's health.

The hub is here; its parts answer one question each: one server's connection
(`agents.mcp_server`), how a server is reached (`agents.mcp_transport`), which of its
tools are offered and by what name (`agents.mcp_listing`), a call's result as the
engine's (`agents.mcp_results`), and what went wrong in words (`agents.mcp_errors`).
Their public names can all be imported from here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from agents.mcp_config import ALL_TOOLS, McpServerConfig
from agents.mcp_consent import Grant, annotations_of, consent, fingerprint
from agents.mcp_errors import ServerUnavailable as ServerUnavailable
from agents.mcp_errors import describe_error as describe_error
from agents.mcp_errors import innermost as innermost
from agents.mcp_lines import DEFAULT_MAX_RESULT_BYTES as DEFAULT_MAX_RESULT_BYTES
from agents.mcp_listing import DEFAULT_CAPS as DEFAULT_CAPS
from agents.mcp_listing import MAX_TOOL_PAGES as MAX_TOOL_PAGES
from agents.mcp_listing import ListingCaps as ListingCaps
from agents.mcp_listing import schema_problem as schema_problem
from agents.mcp_listing import tool_name as tool_name
from agents.mcp_progress import CoalescedProgress
from agents.mcp_results import DEFAULT_MAX_RESULT_CHARS as DEFAULT_MAX_RESULT_CHARS
from agents.mcp_results import MAX_IMAGE_BYTES as MAX_IMAGE_BYTES
from agents.mcp_results import tool_output as tool_output
from agents.mcp_sandbox import NO_SANDBOX as NO_SANDBOX
from agents.mcp_sandbox import Sandbox as Sandbox
from agents.mcp_server import FIRST_BACKOFF_SECONDS as FIRST_BACKOFF_SECONDS
from agents.mcp_server import MAX_BACKOFF_SECONDS as MAX_BACKOFF_SECONDS
from agents.mcp_server import STARTUP_TIMEOUT_SECONDS as STARTUP_TIMEOUT_SECONDS
from agents.mcp_server import McpServer as McpServer
from agents.mcp_server import ServerState as ServerState
from agents.mcp_transport import BASE_ENVIRONMENT as BASE_ENVIRONMENT
from agents.mcp_transport import child_environment as child_environment
from agents.tools import Refusal, Tool, ToolOutput, ToolRefused


@dataclass(frozen=True)
class McpTool:
    """One tool of one server, as offered to the model."""

    name: str  # as the model sees it
    server: str
    tool: str  # as the server knows it
    description: str
    input_schema: dict[str, Any]
    needs_approval: bool  # as its server's config and its annotations say
    why: str = ""  # why it asks first, or why not, in words
    annotations: dict[str, bool] = field(default_factory=dict)  # the server's hints

    @property
    def grant(self) -> Grant:
        """What an "Always allow" of this tool is bound to (never the model's name)."""
        return (self.server, self.tool, fingerprint(self.description, self.input_schema))


class McpHub:
    """Every configured server's connection, on the loop that uses the hub."""

    def __init__(
        self,
        servers: tuple[McpServerConfig, ...] | list[McpServerConfig] = (),
        *,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        startup_timeout: float = STARTUP_TIMEOUT_SECONDS,
        reserved: frozenset[str] = frozenset(),
        sandbox: Sandbox = NO_SANDBOX,
        caps: ListingCaps = DEFAULT_CAPS,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    ) -> None:
        self.servers = {
            config.name: McpServer(
                config,
                startup_timeout=startup_timeout,
                sandbox=sandbox,
                caps=caps,
                max_result_bytes=max_result_bytes,
            )
            for config in servers
        }
        self.max_result_chars = max_result_chars
        self.reserved = reserved  # names other tools have already
        # Told whenever a server's state changes (the worker publishes it then).
        self.on_change: Callable[[McpServer], object] | None = None
        for server in self.servers.values():
            server.on_change = self._changed
        self._starting: list[asyncio.Task[None]] = []

    def _changed(self, server: McpServer) -> None:
        if self.on_change is not None:
            self.on_change(server)

    async def start(self) -> None:
        """Start every enabled server at once (failures are kept on each server, logged)."""
        await asyncio.gather(
            *(self._start(server) for server in self.servers.values() if server.state != "disabled")
        )

    def launch(self) -> None:
        """Start every enabled server in the background, each in its own task, and return
        at once: a server is offered the moment it is ready, and a mute one delays no
        other (its state says "starting" until it answers or its start times out)."""
        for server in self.servers.values():
            if server.state != "disabled":
                self._starting.append(asyncio.get_running_loop().create_task(self._start(server)))

    async def _start(self, server: McpServer) -> None:
        with contextlib.suppress(ServerUnavailable):
            await server.connect()

    def starting(self, servers: Collection[str] | None = None) -> list[str]:
        """The servers (of `servers`, when given) not offered yet because they are still
        starting: no tools of theirs are known."""
        return [
            server.name
            for server in self.servers.values()
            if (servers is None or server.name in servers)
            and server.state in ("starting", "restarting")
            and not server.usable
        ]

    async def close(self) -> None:
        """Close every connection (a server still starting stops too)."""
        for task in self._starting:
            task.cancel()
        await asyncio.gather(*self._starting, return_exceptions=True)
        await asyncio.gather(*(server.close() for server in self.servers.values()))

    def tools(self, *, servers: set[str] | None = None) -> list[McpTool]:
        """The tools of the ready servers (of `servers` only, when given)."""
        offered: list[McpTool] = []
        taken = set(self.reserved)
        for server in self.servers.values():
            if server.state == "disabled" or (servers is not None and server.name not in servers):
                continue
            config = server.config
            for listed in server.usable:
                name = tool_name(server.name, listed.name, taken)
                taken.add(name)
                hints = annotations_of(listed)
                asks = consent(config.approval, config.approve_tools, listed.name, hints)
                offered.append(
                    McpTool(
                        name=name,
                        server=server.name,
                        tool=listed.name,
                        description=(listed.description or listed.title or listed.name)[:1024],
                        input_schema=listed.input_schema,
                        needs_approval=asks.asks,
                        why=asks.why,
                        annotations=hints,
                    )
                )
        return offered

    def status(self) -> list[dict[str, Any]]:
        """Each server's state, for health checks and the Tools page."""
        rows = []
        for server in self.servers.values():
            state = server.state
            if state == "ready" and not server.connected:
                state = "stopped"  # it died since its last call; the next starts it
            rows.append(
                {
                    "name": server.name,
                    "transport": server.config.transport,
                    "state": state,
                    "error": server.error,
                    "tools": len(server.listed),
                    "problems": list(server.problems),
                }
            )
        return rows

    def tool(self, offered: McpTool, *, needs_approval: bool | None = None) -> Tool:
        """The engine's `Tool` for an offered MCP tool."""
        server = self.servers[offered.server]
        max_chars = self.max_result_chars
        limits = server.config.max_calls_per_run

        async def call(**arguments: Any) -> ToolOutput:
            from agents.run.deps import tool_context

            context = tool_context()
            report, run_images = None, None
            if context is not None:
                if limits:
                    count_call(context.extension("mcp_calls"), offered, limits)
                call_id = context.call_id
                run_images = context.extension("mcp_images")  # a run's images, counted

                async def emit(progress: float, total: float | None, message: str | None) -> None:
                    await context.emit(
                        "tool.progress",
                        id=call_id,
                        name=offered.name,
                        progress=progress,
                        total=total,
                        message=(message or "")[:500],
                    )

                report = CoalescedProgress(emit)  # a few a second, the last always shown
            try:
                result = await server.call(offered.tool, arguments, on_progress=report)
            finally:
                if report is not None:
                    await report.finish()
            return tool_output(result, max_chars=max_chars, run_images=run_images)

        return Tool.from_schema(
            name=offered.name,
            description=offered.description,
            parameters=offered.input_schema,
            function=call,
            server=offered.server,
            needs_approval=offered.needs_approval if needs_approval is None else needs_approval,
            grant=list(offered.grant),
            idempotent=True in map(offered.annotations.get, ("readOnlyHint", "idempotentHint")),
        )


def count_call(counts: dict[str, int], offered: McpTool, limits: dict[str, int]) -> None:
    """Count a call of `offered` in its run (`counts`, kept in the run's state), or refuse
    it (`ToolRefused`, for the model and the limit log) when its server's
    `max_calls_per_run` is reached."""
    keys = {ALL_TOOLS: f"{offered.server}/", offered.tool: f"{offered.server}/{offered.tool}"}
    for limit_of, key in keys.items():
        limit = limits.get(limit_of)
        if limit is not None and counts.get(key, 0) >= limit:
            what = (
                f"the MCP server {offered.server!r}'s tools"
                if limit_of == ALL_TOOLS
                else f"the tool {offered.name!r}"
            )
            raise ToolRefused(
                f"Not run: this run has called {what} {limit} time(s), the most its "
                "operator allows in one run (max_calls_per_run). Answer with what you "
                "have, or use another tool.",
                Refusal("max_calls_per_run", "mcp_calls", counts.get(key, 0), limit),
            )
    for limit_of, key in keys.items():
        if limit_of in limits:
            counts[key] = counts.get(key, 0) + 1
