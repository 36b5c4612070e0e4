"""One MCP server's connection: started on first use, started again after it dies (at
once the first time, then after a growing back-off while it keeps failing), and each
call made with the server's ceiling, cancelled through the SDK when cut short."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import deque
from collections.abc import Callable, Coroutine, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

from agents.mcp_config import McpServerConfig
from agents.mcp_errors import CONNECTION_CLOSED, ServerUnavailable, describe_error
from agents.mcp_health import (
    HANG_GRACE_SECONDS,
    answers,
    end_owner,
    gone_reason,
    hung_message,
    hung_reason,
    lost_message,
    session_gone,
    start_error,
    watch,
)
from agents.mcp_lines import DEFAULT_MAX_RESULT_BYTES, RESULT_TOO_LARGE, cut_result
from agents.mcp_listing import DEFAULT_CAPS, ListingCaps, list_tools, usable_tools
from agents.mcp_sandbox import NO_SANDBOX, Sandbox
from agents.mcp_transport import open_client
from agents.tools import ToolError

logger = logging.getLogger(__name__)

ServerState = Literal["starting", "ready", "restarting", "failed", "stopped", "disabled"]

STARTUP_TIMEOUT_SECONDS = 30.0
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0


@dataclass
class McpServer:
    """One server's connection, started on first use and again after it dies."""

    config: McpServerConfig
    startup_timeout: float = STARTUP_TIMEOUT_SECONDS
    sandbox: Sandbox = NO_SANDBOX  # where a stdio server's process runs
    caps: ListingCaps = DEFAULT_CAPS  # how many of its tools, how big, are offered
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES  # a stdio message is read no further
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
    # Told each time the state (or its reason) changes: the worker publishes it at once.
    on_change: Callable[[McpServer], object] | None = None
    hang_grace: float = HANG_GRACE_SECONDS  # see agents.mcp_health
    _background: set[asyncio.Task[None]] = field(default_factory=set)  # probes, old owners
    _hung: deque[Any] = field(default_factory=lambda: deque(maxlen=4))  # clients dropped
    _probing: asyncio.Task[None] | None = None  # the last probe after a cut call

    def _set(self, state: ServerState, error: str | None = None) -> None:
        """Change the state (and its reason, when given), telling `on_change`."""
        before = (self.state, self.error)
        self.state, self.error = state, self.error if error is None else error
        if self.on_change is not None and (state, self.error) != before:
            self.on_change(self)

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
            self._set("restarting" if self.state == "restarting" else "starting")
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
                reason = start_error(self.config, self.sandbox, error)
            await self._stop_owner()
            self._failed(reason)
            raise ServerUnavailable(f"the MCP server {self.name!r} is unavailable ({reason})")

    def _failed(self, reason: str) -> None:
        self._set("failed", reason)
        delay = min(FIRST_BACKOFF_SECONDS * 2**self._failures, MAX_BACKOFF_SECONDS)
        self._failures += 1
        self._retry_at = time.monotonic() + delay
        logger.warning("MCP server %r (%s): %s", self.name, self.config.where, reason)

    def _alive(self, client: Any = None) -> bool:
        # The SDK marks its dispatcher closed when the server's output ends (it exited).
        client = self._client if client is None else client
        session = getattr(client, "_session", None)
        dispatcher = getattr(session, "_dispatcher", None)
        return client is not None and not getattr(dispatcher, "_closed", False)

    async def _own(self, ready: asyncio.Future[None], closing: asyncio.Event) -> None:
        """The one task that enters and leaves the SDK's client (its task groups require it)."""
        client = None
        try:
            async with AsyncExitStack() as stack:
                opened = await open_client(
                    self.config, stack, self.sandbox, max_bytes=self.max_result_bytes
                )
                client = await stack.enter_async_context(opened)
                listed = await list_tools(client, self.caps)
                self._client, self.listed = client, listed.tools
                # Checked once a connection, not for every run that offers them.
                self.usable, self.problems = usable_tools(listed, self.caps)
                for problem in self.problems:
                    logger.warning("MCP server %r: %s", self.name, problem)
                self._failures = 0
                self._set("ready", "")
                ready.set_result(None)
                await watch(lambda: self._alive(client), closing)
                if not closing.is_set() and self._client is client:  # it went away by itself
                    self._client = None
                    self._set("stopped", gone_reason(self.config))
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
            if client is not None and self._client is client:  # not a newer owner's
                self._client = None
                if self.state == "ready":
                    self._set("stopped")

    async def _stop_owner(self) -> None:
        owner, self._owner = self._owner, None
        if owner is not None and self._closing is not None:
            await end_owner(owner, self._closing)

    def _drop_owner(self) -> None:
        """End the owner in the background: a hung process takes seconds to kill."""
        owner, self._owner = self._owner, None
        if owner is not None and self._closing is not None:
            self._in_background(end_owner(owner, self._closing))

    def _in_background(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def close(self) -> None:
        """Close the connection (a stdio server's process ends, a hung one's too)."""
        async with self._lock:
            await self._stop_owner()
            if self.state != "disabled":
                self._set("stopped", "")
        await asyncio.gather(*self._background, return_exceptions=True)

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        on_progress: Callable[[float, float | None, str | None], Any] | None = None,
    ) -> Any:
        """Call the server's tool; the SDK's `CallToolResult`, or a `ToolError` saying why not.
        A call cut short is followed by a probe: a hung server is restarted (mcp_health)."""
        from mcp.shared.exceptions import MCPError

        await self.connect()
        if self._probing is not None and not self._probing.done():
            await asyncio.shield(self._probing)  # whether a call cut short hung it, first
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
            self._probing = self._in_background(self._probe(client))
            raise ToolError(
                f"the MCP server {self.name!r} did not answer within {timeout:g} s "
                "(its timeout_seconds); the call was cancelled"
            ) from None
        except asyncio.CancelledError:
            self._probing = self._in_background(self._probe(client))
            raise
        except MCPError as error:
            if error.code == RESULT_TOO_LARGE:
                return cut_result(error)  # its beginning, the cut noted to the model
            if client in self._hung:
                raise ToolError(hung_message(self.config)) from None
            if error.code == CONNECTION_CLOSED or await session_gone(self.config, client):
                await self._lost(client)
                raise ToolError(lost_message(self.config)) from None
            raise ToolError(f"the MCP server {self.name!r} refused the call: {error}") from None
        except Exception as error:
            if client in self._hung:
                raise ToolError(hung_message(self.config)) from None
            if not self._alive():
                await self._lost(client)
            why = self.config.without_secrets(describe_error(error))
            raise ToolError(f"the MCP server {self.name!r} failed: {why}") from None

    async def _probe(self, client: Any) -> None:
        """After a cut call: restart the server when it answers nothing within the grace."""
        answered = await answers(client, self.hang_grace)
        if answered is None:
            await self._lost(client)
        elif not answered:
            await self._restart(client)

    async def _restart(self, client: Any) -> None:
        """Drop the hung connection `client` (its calls fail at once), start a new one."""
        async with self._lock:
            if self._client is not client or client is None:
                return  # dropped already, or a new connection made since
            self._hung.append(client)
            self._client = None
            reason = hung_reason(self.config, self.hang_grace)
            logger.warning("MCP server %r (%s): %s", self.name, self.config.where, reason)
            self._set("restarting", reason)
            self._drop_owner()
        if self.state == "restarting":  # not closed meanwhile
            with contextlib.suppress(ServerUnavailable):
                await self.connect()

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
                self._set("stopped")


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
