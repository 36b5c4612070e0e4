"""Oracle's stdio transport to an MCP server: the SDK's `stdio_client`, with its reading
bounded (`agents.mcp_lines`).

Why not the SDK's own: its reader decodes the server's output and joins each chunk to
the line so far (`(buffer + chunk).split("\\n")`), so a line of N bytes costs O(N²)
copies on the event loop every run of a worker shares, and it keeps and parses the whole
line whatever its size, even for a call already cancelled. An 80 MB result held other
users' runs for seconds, minutes after its call had timed out, and a 30 MB one grew the
worker by its size several times over. The SDK offers no way to bound it, so this module
starts the process and bridges its pipes itself, as the SDK's does, and reuses the SDK's
own spawning and shutdown (close stdin, wait, then end the process tree: the spec's
order) and its messages: `SessionMessage`s validated by its JSON-RPC model, never
JSON-RPC written by hand. Only the reading of lines is Oracle's.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import anyio.lowlevel

from agents.mcp_lines import DEFAULT_MAX_RESULT_BYTES, Lines, UnknownCut

logger = logging.getLogger(__name__)

WRITER_FLUSH_SECONDS = 0.5  # as the SDK's: accepted messages get this long to be written


@asynccontextmanager
async def bounded_stdio_client(
    server: Any, errlog: TextIO = sys.stderr, *, max_bytes: int = DEFAULT_MAX_RESULT_BYTES
) -> AsyncIterator[Any]:
    """Start the server of `server` (the SDK's `StdioServerParameters`) and yield the
    SDK's transport streams (read, write), no line of its output read past `max_bytes`."""
    # The SDK's own spawning and shutdown, private in its module (mcp is pinned).
    from mcp.client.stdio import (
        _aclose_all,
        _create_platform_compatible_process,
        _drain_stdout,
        _stop_server_process,
        get_default_environment,
    )
    from mcp.shared.message import SessionMessage

    process = await _create_platform_compatible_process(
        command=server.command,
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    # No awaits until the task group is entered: a cancellation would leak the process.
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    lines = Lines(max_bytes)
    shutting_down = False
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                try:
                    await lines.pump(process.stdout, read_writer.send)
                except UnknownCut as cut:
                    logger.warning("%s", cut)
                finally:
                    await _drain_stdout(process)
        except anyio.ClosedResourceError:
            pass  # our own shutdown closed a stream under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not shutting_down:
                logger.exception("Reading from the MCP server's stdout failed mid-session")

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for session_message in write_reader:
                    lines.sent(session_message.message)
                    text = session_message.message.model_dump_json(
                        by_alias=True, exclude_unset=True
                    )
                    await process.stdin.send((text + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server may still be alive: the session must see the connection end
            # rather than a request wait for ever.
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()  # the reader drains, so a server stuck writing can exit
        write_stream.close()
        with anyio.move_on_after(WRITER_FLUSH_SECONDS):
            await writer_done.wait()
        await _stop_server_process(process)
        await _aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):  # the process must not outlive the client
                await shutdown()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
