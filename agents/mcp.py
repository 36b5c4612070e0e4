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
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import logging
import math
import os
import re
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

from agents.mcp_config import SEPARATOR, McpServerConfig
from agents.tools import Tool, ToolError, ToolOutput

logger = logging.getLogger(__name__)

ServerState = Literal["starting", "ready", "failed", "stopped", "disabled"]

# What a stdio server gets of Oracle's environment: enough to find programs and a home,
# nothing else (no SECRET_KEY, DATABASE_URL, provider keys...). Its config adds the rest.
BASE_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME")
DEFAULT_MAX_RESULT_CHARS = 100_000
MAX_IMAGE_BYTES = 2_000_000  # an attachment larger than this is described, not kept
STARTUP_TIMEOUT_SECONDS = 30.0
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0
MAX_TOOL_PAGES = 50  # tools/list pages read from one server, at most
_CONNECTION_CLOSED = -32000  # the SDK's CONNECTION_CLOSED error code


class ServerUnavailable(ToolError):
    """The server cannot take calls now (it would not start, or is in its back-off)."""


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


def child_environment(config: McpServerConfig) -> dict[str, str]:
    """A stdio server's environment: the minimal base from Oracle's, then its config's."""
    base = {key: os.environ[key] for key in BASE_ENVIRONMENT if key in os.environ}
    return base | config.env


@dataclass
class McpServer:
    """One server's connection, started on first use and again after it dies."""

    config: McpServerConfig
    startup_timeout: float = STARTUP_TIMEOUT_SECONDS
    state: ServerState = "stopped"
    error: str = ""  # why it is failed (or last failed)
    listed: list[Any] = field(default_factory=list)  # the server's tools (mcp_types.Tool)
    usable: list[Any] = field(default_factory=list)  # those whose schema a model can take
    problems: list[str] = field(default_factory=list)  # tools left out, and why
    starts: int = 0
    calls: int = 0
    _client: Any = None
    _owner: asyncio.Task[None] | None = None
    _closing: asyncio.Event | None = None
    # Made here, bound to the loop that first waits on it (the hub's: one loop a hub).
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _failures: int = 0
    _retry_at: float = 0.0

    def __post_init__(self) -> None:
        if not self.config.enabled:
            self.state = "disabled"

    @property
    def name(self) -> str:
        return self.config.name

    async def connect(self) -> None:
        """Make the connection ready, starting the server when need be.

        Raises `ServerUnavailable` (with the reason) when it cannot be had now.
        """
        if self.state == "disabled":
            raise ServerUnavailable(f"the MCP server {self.name!r} is disabled")
        async with self._lock:
            if self.state == "ready" and self._alive():
                return
            if self.state == "failed" and time.monotonic() < self._retry_at:
                wait = math.ceil(self._retry_at - time.monotonic())
                raise ServerUnavailable(
                    f"the MCP server {self.name!r} is unavailable ({self.error}); "
                    f"Oracle tries it again in {wait} s"
                )
            await self._stop_owner()
            self.state = "starting"
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._closing = asyncio.Event()
            self._owner = asyncio.create_task(self._own(ready, self._closing))
            self.starts += 1
            try:
                await asyncio.wait_for(asyncio.shield(ready), self.startup_timeout)
                return
            except TimeoutError:
                reason = f"it did not answer within {self.startup_timeout:.0f} s of starting"
            except Exception as error:
                reason = self._start_error(error)
            await self._stop_owner()
            self._failed(reason)
            raise ServerUnavailable(f"the MCP server {self.name!r} is unavailable ({reason})")

    def _start_error(self, error: BaseException) -> str:
        """Why the server did not start, in words an operator can act on."""
        inner = innermost(error)
        if _code(inner) == _CONNECTION_CLOSED:
            if self.config.transport == "stdio":
                return "it exited before answering (its error output is in Oracle's log)"
            return "it closed the connection before answering"
        if self.config.transport != "stdio" and _is_connect_error(inner):
            return f"nothing answers at {self.config.where} ({describe_error(inner)})"
        return self.config.without_secrets(describe_error(error))

    def _failed(self, reason: str) -> None:
        self.state, self.error = "failed", reason
        delay = min(FIRST_BACKOFF_SECONDS * 2**self._failures, MAX_BACKOFF_SECONDS)
        self._failures += 1
        self._retry_at = time.monotonic() + delay
        logger.warning("MCP server %r (%s): %s", self.name, self.config.where, reason)

    def _alive(self) -> bool:
        # The SDK marks its dispatcher closed when the server's output ends (it exited).
        session = getattr(self._client, "_session", None)
        dispatcher = getattr(session, "_dispatcher", None)
        return self._client is not None and not getattr(dispatcher, "_closed", False)

    async def _own(self, ready: asyncio.Future[None], closing: asyncio.Event) -> None:
        """The one task that enters and leaves the SDK's client (its task groups require it)."""
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(await self._new_client(stack))
                listed = await _list_tools(client)
                self._client, self.listed = client, listed
                # Checked once a connection, not for every run that offers them.
                self.usable, self.problems = _usable_tools(listed)
                self.state, self.error, self._failures = "ready", "", 0
                ready.set_result(None)
                await closing.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as error:  # the SDK raises exception groups of its task groups
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else RuntimeError(error))
            elif not closing.is_set():
                logger.warning("MCP server %r stopped: %s", self.name, describe_error(error))
        finally:
            self._client = None
            if self.state == "ready":
                self.state = "stopped"

    async def _new_client(self, stack: AsyncExitStack) -> Any:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        config = self.config
        info = _client_info()
        if config.transport == "stdio":
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=child_environment(config),
                cwd=config.cwd,
            )
            # The server's stderr goes to the process's own (a worker's log). Not sys.stderr:
            # Celery replaces it with a logging proxy, which has no file to hand a child.
            errlog = sys.__stderr__ if sys.__stderr__ is not None else sys.stderr
            return Client(stdio_client(params, errlog=errlog), client_info=info)
        import httpx2

        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=config.headers, timeout=httpx2.Timeout(30.0, read=300.0))
        )
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            transport = sse_client(config.url, headers=config.headers)
            return Client(transport, client_info=info, mode="legacy")
        from mcp.client.streamable_http import streamable_http_client

        return Client(streamable_http_client(config.url, http_client=http), client_info=info)

    async def _stop_owner(self) -> None:
        owner, self._owner = self._owner, None
        if owner is None:
            return
        if self._closing is not None:
            self._closing.set()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(owner), 5.0)
        if not owner.done():
            owner.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(owner, 5.0)

    async def close(self) -> None:
        """Close the connection (a stdio server's process ends)."""
        async with self._lock:
            await self._stop_owner()
            if self.state != "disabled":
                self.state = "stopped"

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        on_progress: Callable[[float, float | None, str | None], Any] | None = None,
    ) -> Any:
        """Call the server's tool; the SDK's `CallToolResult`, or a `ToolError` saying why not."""
        from mcp.shared.exceptions import MCPError

        await self.connect()
        client = self._client
        timeout = self.config.timeout_seconds
        self.calls += 1
        try:
            async with asyncio.timeout(timeout):
                return await client.call_tool(
                    tool, dict(arguments), progress_callback=_progress(on_progress)
                )
        except TimeoutError:
            raise ToolError(
                f"the MCP server {self.name!r} did not answer within {timeout:g} s "
                "(its timeout_seconds); the call was cancelled"
            ) from None
        except MCPError as error:
            if error.code == _CONNECTION_CLOSED or await self._session_gone(client):
                await self._lost(client)
                raise ToolError(self._lost_message()) from None
            raise ToolError(f"the MCP server {self.name!r} refused the call: {error}") from None
        except Exception as error:
            if not self._alive():
                await self._lost(client)
            raise ToolError(
                f"the MCP server {self.name!r} failed: {describe_error(error)}"
            ) from None

    def _lost_message(self) -> str:
        if self.config.transport == "stdio":
            return (
                f"the MCP server {self.name!r} stopped during the call; Oracle starts it "
                "again for the next one"
            )
        return (
            f"the MCP server {self.name!r} lost the connection (it may have restarted); "
            "Oracle connects again for the next call"
        )

    async def _session_gone(self, client: Any) -> bool:
        """Whether a remote server refuses the session itself, not just one call: one
        that restarted has forgotten it and answers every request of it with an error
        (404), so the connection must be made again. Asking for its tools tells which
        (not a ping: the protocol's newest version has none)."""
        if self.config.transport == "stdio":
            return False  # a stdio session ends only with its process (CONNECTION_CLOSED)
        from mcp.shared.exceptions import MCPError

        try:
            async with asyncio.timeout(min(5.0, self.config.timeout_seconds)):
                await client.list_tools(cache_mode="bypass")
        except (MCPError, OSError):
            return True
        except Exception:  # no answer in time: a busy server, not a lost one
            return False
        return False

    @property
    def connected(self) -> bool:
        """Whether the server is ready and its connection still open (a stdio server
        that died since its last call is not; the next call starts it again)."""
        return self.state == "ready" and self._alive()

    async def _lost(self, client: Any) -> None:
        """Drop the connection `client` (unless another call already made a new one)."""
        async with self._lock:
            if self._client is client and client is not None:
                await self._stop_owner()
                self.state = "stopped"


def _progress(
    on_progress: Callable[[float, float | None, str | None], Any] | None,
) -> Any:
    if on_progress is None:
        return None

    async def report(progress: float, total: float | None, message: str | None) -> None:
        with contextlib.suppress(Exception):  # a display must never fail the call
            outcome = on_progress(progress, total, message)
            if asyncio.iscoroutine(outcome):
                await outcome

    return report


def _usable_tools(listed: list[Any]) -> tuple[list[Any], list[str]]:
    """The listed tools a model can be offered, and why each other one is left out."""
    usable, problems = [], []
    for tool in listed:
        problem = schema_problem(tool.input_schema)
        if problem is None:
            usable.append(tool)
        else:
            problems.append(f"tool {tool.name[:80]!r} left out: {problem}")
    return usable, problems


async def _list_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _client_info() -> Any:
    from mcp_types import Implementation

    return Implementation(name="oracle", version="0.1.0")


def innermost(error: BaseException) -> BaseException:
    """The first exception inside the SDK's (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _code(error: BaseException) -> int | None:
    from mcp.shared.exceptions import MCPError

    return error.code if isinstance(error, MCPError) else None


def _is_connect_error(error: BaseException) -> bool:
    import httpx2

    return isinstance(error, httpx2.ConnectError | ConnectionError)


def describe_error(error: BaseException) -> str:
    """One line for an exception, looking inside the SDK's exception groups."""
    error = innermost(error)
    text = str(error).strip() or type(error).__name__
    if isinstance(error, FileNotFoundError):
        text = f"the command was not found ({error.filename or text})"
    return text.splitlines()[0][:300]


# --- results -------------------------------------------------------------------------


def tool_output(result: Any, *, max_chars: int = DEFAULT_MAX_RESULT_CHARS) -> ToolOutput:
    """A tool result from the SDK's `CallToolResult`: text, structured content, resource
    links and embedded text resources as text; images kept as attachments for the chat;
    the whole cut at `max_chars` with a note to the model. `isError` is a tool error."""
    parts: list[str] = []
    attachments: list[dict[str, Any]] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            size = len(block.data) * 3 // 4
            if size <= MAX_IMAGE_BYTES and _is_base64(block.data):
                attachments.append({"type": "image", "mime_type": block.mime_type,
                                    "data": block.data})  # fmt: skip
                parts.append(f"[image ({block.mime_type}, {size:,} bytes), shown to the user]")
            else:
                parts.append(f"[image ({block.mime_type}, {size:,} bytes), too large to show]")
        elif kind == "audio":
            parts.append(f"[audio ({block.mime_type}), not shown]")
        elif kind == "resource_link":
            line = f"[resource {block.name}: {block.uri}]"
            if getattr(block, "description", None):
                line += f" {block.description}"
            parts.append(line)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"[resource {resource.uri}]\n{text}")
            else:
                parts.append(f"[resource {resource.uri} ({resource.mime_type or 'binary'})]")
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(parts):
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    text = "\n".join(parts)
    if len(text) > max_chars:
        text = (
            f"{text[:max_chars]}\n[Cut by Oracle: the result had {len(text):,} characters and "
            f"only the first {max_chars:,} are shown. Ask for less (a narrower query, a page) "
            "if you need the rest.]"
        )
    if result.is_error:
        return ToolOutput(text or "the tool reported an error", ok=False, attachments=attachments)
    return ToolOutput(text, attachments=attachments)


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        return False
    return True


# --- the hub -------------------------------------------------------------------------


@dataclass(frozen=True)
class McpTool:
    """One tool of one server, as offered to the model."""

    name: str  # as the model sees it
    server: str
    tool: str  # as the server knows it
    description: str
    input_schema: dict[str, Any]
    needs_approval: bool


class McpHub:
    """Every configured server's connection, on the loop that uses the hub."""

    def __init__(
        self,
        servers: tuple[McpServerConfig, ...] | list[McpServerConfig] = (),
        *,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        startup_timeout: float = STARTUP_TIMEOUT_SECONDS,
        reserved: frozenset[str] = frozenset(),
    ) -> None:
        self.servers = {
            config.name: McpServer(config, startup_timeout=startup_timeout) for config in servers
        }
        self.max_result_chars = max_result_chars
        self.reserved = reserved  # names other tools have already

    async def start(self) -> None:
        """Start every enabled server at once (failures are kept on each server, logged)."""
        await asyncio.gather(
            *(self._start(server) for server in self.servers.values() if server.state != "disabled")
        )

    async def _start(self, server: McpServer) -> None:
        with contextlib.suppress(ServerUnavailable):
            await server.connect()

    async def close(self) -> None:
        """Close every connection."""
        await asyncio.gather(*(server.close() for server in self.servers.values()))

    def tools(self, *, servers: set[str] | None = None) -> list[McpTool]:
        """The tools of the ready servers (of `servers` only, when given)."""
        offered: list[McpTool] = []
        taken = set(self.reserved)
        for server in self.servers.values():
            if server.state == "disabled" or (servers is not None and server.name not in servers):
                continue
            for listed in server.usable:
                name = tool_name(server.name, listed.name, taken)
                taken.add(name)
                offered.append(
                    McpTool(
                        name=name,
                        server=server.name,
                        tool=listed.name,
                        description=(listed.description or listed.title or listed.name)[:1024],
                        input_schema=listed.input_schema,
                        needs_approval=server.config.needs_approval(listed.name),
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

        async def call(**arguments: Any) -> ToolOutput:
            from agents.run.deps import tool_context

            context = tool_context()
            report = None
            if context is not None:
                call_id = context.call_id

                async def report(progress: float, total: float | None, message: str | None) -> None:
                    await context.emit(
                        "tool.progress",
                        id=call_id,
                        name=offered.name,
                        progress=progress,
                        total=total,
                        message=(message or "")[:500],
                    )

            result = await server.call(offered.tool, arguments, on_progress=report)
            return tool_output(result, max_chars=max_chars)

        return Tool.from_schema(
            name=offered.name,
            description=offered.description,
            parameters=offered.input_schema,
            function=call,
            server=offered.server,
            needs_approval=offered.needs_approval if needs_approval is None else needs_approval,
        )


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
