"""An MCP server written for Oracle's tests: slow, failing, enormous and hostile tools.

Run it with
`python -m tests.mcp.testing_server [--http PORT] [--hostile] [--exit-at-once] [--tag WORD]`.
It is built on the official SDK (`MCPServer`), like the servers people install.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import struct
import sys
import zlib
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ImageContent, TextContent, ToolAnnotations
from mcp_types import Tool as ListedTool


def png(width: int, height: int) -> bytes:
    """A PNG of a red disc on white, made by hand: the one picture the tests need."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = bytearray()
    radius = min(width, height) * 0.4
    for y in range(height):
        rows.append(0)  # no filter
        for x in range(width):
            inside = (x - width / 2) ** 2 + (y - height / 2) ** 2 <= radius**2
            rows.extend(b"\xd0\x20\x20" if inside else b"\xff\xff\xff")
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows)))
        + chunk(b"IEND", b"")
    )


PICTURE_PNG = png(96, 64)
LONG_NAME = "a" * 200


class TestingServer(MCPServer[Any]):
    """The SDK's server, whose listing may add tools no client should trust."""

    hostile = False

    async def list_tools(self) -> list[ListedTool]:
        tools = await super().list_tools()
        if self.hostile:
            tools.append(
                ListedTool(
                    name=LONG_NAME,
                    description="A name of 200 characters.",
                    input_schema={"type": "object", "properties": {}},
                    annotations=READ_ONLY,
                )
            )
            tools.append(
                ListedTool(
                    name="bad_schema",
                    description="Its schema is no schema.",
                    input_schema={"type": "object", "properties": {"x": {"type": 17}}},
                    annotations=READ_ONLY,
                )
            )
            tools.append(
                ListedTool(
                    name="we ird!",
                    description="Spaces and punctuation.",
                    input_schema={"type": "object", "properties": {}},
                    annotations=READ_ONLY,
                )
            )
        return tools


server = TestingServer("oracle-testing")
# Its tools change nothing, and say so (Oracle's "auto" approval then lets them act
# without asking); `die` says it is destructive.
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True)


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool(annotations=READ_ONLY)
async def sleep(seconds: float, ctx: Context) -> str:
    """Sleep for some seconds, reporting progress each second; tells if it was cancelled."""
    marker = os.environ.get("ORACLE_TEST_CANCEL_MARKER")
    try:
        whole = int(seconds)
        for second in range(whole):
            await ctx.report_progress(second, seconds, f"slept {second} of {seconds} s")
            await asyncio.sleep(1)
        await asyncio.sleep(seconds - whole)
    except asyncio.CancelledError:
        if marker:
            _note_cancelled(marker)  # at once: a cancelled scope would cancel an await
        raise
    return f"slept {seconds} s"


def _note_cancelled(marker: str) -> None:
    with open(marker, "a") as out:
        out.write("cancelled\n")


@server.tool(annotations=READ_ONLY)
def huge(chars: int) -> str:
    """Return this many characters."""
    return "x" * chars


@server.tool(annotations=READ_ONLY)
def fail(message: str) -> str:
    """Fail with the message (an isError result)."""
    raise ValueError(message)


@server.tool(annotations=READ_ONLY)
def environment() -> str:
    """The names and values of this process's environment variables, as JSON."""
    return json.dumps(dict(os.environ), sort_keys=True)


@server.tool(structured_output=False, annotations=READ_ONLY)
def picture() -> list[Any]:
    """A caption and a picture (96 by 64 pixels)."""
    return [
        TextContent(type="text", text="a red disc"),
        ImageContent(
            type="image", data=base64.b64encode(PICTURE_PNG).decode(), mime_type="image/png"
        ),
    ]


@server.tool(annotations=READ_ONLY)
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def die() -> str:
    """End this server's process at once."""
    os._exit(3)


@server.tool()
async def append(path: str, line: str, seconds: float = 0) -> str:
    """Wait some seconds, then add the line to the file at the path: a tool that acts,
    and says nothing of being safe to run twice."""
    await asyncio.sleep(seconds)
    await asyncio.to_thread(_add_line, path, line)
    return f"added {line}"


def _add_line(path: str, line: str) -> None:
    with open(path, "a") as out:
        out.write(line + "\n")


def mark(text: str) -> str:
    """Write the text in this server's marker file (a tool that acts)."""
    with open(os.environ["ORACLE_TEST_MARK_FILE"], "a") as out:
        out.write(text + "\n")
    return f"marked {text}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, help="serve Streamable HTTP on this port")
    parser.add_argument("--hostile", action="store_true", help="list tools no client should trust")
    parser.add_argument("--exit-at-once", action="store_true", help="exit before the handshake")
    parser.add_argument("--tag", help="a word on the command line that tests find the process by")
    parser.add_argument(
        "--marking-tool",
        help="also offer a tool of this name that acts (no read-only mark): it appends its "
        "text to the file $ORACLE_TEST_MARK_FILE",
    )
    options = parser.parse_args()
    if options.exit_at_once:
        print("testing server: exiting at once", file=sys.stderr)
        sys.exit(1)
    server.hostile = options.hostile
    if options.marking_tool:
        server.add_tool(mark, name=options.marking_tool)
    if options.http:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
