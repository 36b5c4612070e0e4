"""One MCP server's connection: started on first use, started again after it dies (at
once the first time, then after a growing back-off while it keeps failing), and each
call made with the server's ceiling, cancelled through the SDK when cut short."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

from agents.mcp_config import McpServerConfig
from agents.mcp_errors import (
    CONNECTION_CLOSED,
    ServerUnavailable,
    describe_error,
    error_code,
    innermost,
    is_connect_error,
)
from agents.mcp_listing import list_tools, usable_tools
from agents.mcp_sandbox import NO_SANDBOX, Sandbox
from agents.mcp_transport import open_client
from agents.tools import ToolError

logger = logging.getLogger(__name__)

ServerState = Literal["starting", "ready", "failed", "stopped", "disabled"]

STARTUP_TIMEOUT_SECONDS = 30.0
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0


@dataclass
class McpServer:
    """One server's connection, started on first use and again after it dies."""

    config: McpServerConfig
    startup_timeout: float = STARTUP_TIMEOUT_SECONDS
    sandbox: Sandbox = NO_SANDBOX  # where a stdio server's process runs
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
        if error_code(inner) == CONNECTION_CLOSED:
            if self.config.transport == "stdio" and self.sandbox.contained:
                return (
                    "it exited before answering, in its sandbox (bubblewrap); its error "
                    "output, bubblewrap's included, is in Oracle's log"
                )
            if self.config.transport == "stdio":
                return "it exited before answering (its error output is in Oracle's log)"
            return "it closed the connection before answering"
        if self.config.transport != "stdio" and is_connect_error(inner):
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
                opened = await open_client(self.config, stack, self.sandbox)
                client = await stack.enter_async_context(opened)
                listed = await list_tools(client)
                self._client, self.listed = client, listed
                # Checked once a connection, not for every run that offers them.
                self.usable, self.problems = usable_tools(listed)
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
                why = self.config.without_secrets(describe_error(error))
                logger.warning("MCP server %r stopped: %s", self.name, why)
        finally:
            self._client = None
            if self.state == "ready":
                self.state = "stopped"

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
            if error.code == CONNECTION_CLOSED or await self._session_gone(client):
                await self._lost(client)
                raise ToolError(self._lost_message()) from None
            raise ToolError(f"the MCP server {self.name!r} refused the call: {error}") from None
        except Exception as error:
            if not self._alive():
                await self._lost(client)
            why = self.config.without_secrets(describe_error(error))
            raise ToolError(f"the MCP server {self.name!r} failed: {why}") from None

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
