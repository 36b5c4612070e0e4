"""An MCP server written for Oracle's tests: slow, failing, enormous and hostile tools.

Run it with
`python -m tests.mcp.testing_server [--http PORT] [--hostile] [--exit-at-once] [--tag WORD]
[--many-tools N] [--big-schema BYTES]`.
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
import time
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
    many_tools = 0  # extra tools listed after the real ones (--many-tools)
    big_schema = 0  # bytes of one more tool's schema, listed before them (--big-schema)

    async def list_tools(self) -> list[ListedTool]:
        tools = await super().list_tools()
        if self.big_schema:
            tools.append(big_tool(self.big_schema))
        tools.extend(extra_tool(number) for number in range(self.many_tools))
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


def big_tool(size: int) -> ListedTool:
    """A tool whose input schema is about `size` bytes of JSON (one long description)."""
    field = {"type": "string", "description": "x" * size}
    return ListedTool(
        name="big",
        description="A tool with an enormous schema.",
        input_schema={"type": "object", "properties": {"text": field}},
        annotations=READ_ONLY,
    )


def extra_tool(number: int) -> ListedTool:
    """One of --many-tools: a plausible tool of about 400 bytes, never meant to be called."""
    fields = ("query", "limit", "cursor", "region")
    return ListedTool(
        name=f"extra_{number:04d}",
        description=f"Extra tool number {number}: looks things up in collection {number}.",
        input_schema={
            "type": "object",
            "properties": {
                name: {"type": "string", "description": f"The {name} of the lookup."}
                for name in fields
            },
            "required": ["query"],
        },
        annotations=READ_ONLY,
    )


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


@server.tool(annotations=READ_ONLY)
async def block(seconds: float) -> str:
    """Block this whole server for some seconds: it answers nothing meanwhile, a cancel
    of this call included (a hung server)."""
    time.sleep(seconds)  # noqa: ASYNC251 (in the event loop, on purpose)
    return f"blocked {seconds} s"


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


@server.tool(structured_output=False, annotations=READ_ONLY)
def pictures(count: int, size: int) -> list[Any]:
    """This many pictures of about `size` bytes each (the picture, padded after its end)."""
    padded = PICTURE_PNG + b"\0" * max(0, size - len(PICTURE_PNG))
    data = base64.b64encode(padded).decode()
    return [ImageContent(type="image", data=data, mime_type="image/png")] * count


@server.tool(annotations=READ_ONLY)
async def storm(count: int, ctx: Context) -> str:
    """Report progress this many times, as fast as it can, then answer."""
    for done in range(1, count + 1):
        await ctx.report_progress(done, count, f"{done} of {count}")
    return f"reported {count} times"


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
    """Write the text in this server's marker file (a tool that acts), with the time."""
    with open(os.environ["ORACLE_TEST_MARK_FILE"], "a") as out:
        out.write(f"{text}\t{time.time():.6f}\n")
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
    parser.add_argument("--many-tools", type=int, default=0, help="also list this many tools")
    parser.add_argument(
        "--big-schema", type=int, default=0, help="also list a tool whose schema is this many bytes"
    )
    options = parser.parse_args()
    if options.exit_at_once:
        print("testing server: exiting at once", file=sys.stderr)
        sys.exit(1)
    server.hostile = options.hostile
    server.many_tools, server.big_schema = options.many_tools, options.big_schema
    if options.marking_tool:
        server.add_tool(mark, name=options.marking_tool)
    if options.http:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
