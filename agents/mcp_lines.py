"""A stdio MCP server's output cut into messages, never read past a byte cap.

A server writes one JSON-RPC message a line. Each line is read in chunks with a running
byte count: past `max_bytes` (ORACLE_TOOL_RESULT_MAX_BYTES) the rest of the line, up to
its "\\n", is thrown away as it arrives, never kept, and the call it answers gets an error
(`RESULT_TOO_LARGE`) carrying what the kept beginning holds: its text blocks and whole
images, read by pydantic-core's partial JSON parser. The SDK matches an answer to its call
by id, so the line's id is found, in this order: in the kept beginning (the Python SDK
writes `{"jsonrpc":"2.0","id":...` first), then in the last bytes of the line (the
TypeScript SDK writes it last), then as the only call still waiting. When none of these
tells, Oracle cannot say which call was cut: the connection is ended (every waiting call
fails; the next call starts the server again), rather than a call waiting out its timeout.

A line over 64 KiB is parsed in a worker thread, off the event loop every run shares; a
line answering a call the client cancelled is thrown away unparsed. Messages are made by
the SDK's own JSON-RPC model (`mcp_types.jsonrpc_message_adapter`), never by hand.
"""

from __future__ import annotations

import codecs
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from mcp_types import JSONRPCError

logger = logging.getLogger(__name__)

DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024
RESULT_TOO_LARGE = -32050  # a JSON-RPC server error code of Oracle's: the line was cut
CUT_META = "oracle/cut"  # the key in a cut result's `_meta`: how many bytes were read
CHUNK_BYTES = 64 * 1024
THREAD_PARSE_BYTES = 64 * 1024  # a longer line is parsed off the event loop
HEAD_BYTES = 256  # where an id written first is looked for
TAIL_BYTES = 512  # where an id written last is looked for
CANCELLED = "notifications/cancelled"
CANCELLED_KEPT = 256  # the cancelled calls remembered (a server may never answer them)

_ID = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
HEAD_ID = re.compile(rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID)
TAIL_ID = re.compile(rb'"id"\s*:\s*' + _ID + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*\Z')

Deliver = Callable[[Any], Awaitable[None]]


class UnknownCut(Exception):
    """A line past the cap whose call cannot be told: the connection must end."""


@dataclass
class Head:
    """What the kept beginning of a cut line holds."""

    id: str | int | None = None
    method: str | None = None  # a server's own request or notice, not an answer
    content: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Line:
    parts: list[bytes] = field(default_factory=list)
    size: int = 0  # bytes of the line so far, kept or not
    discarding: bool = False  # past the cap, or a cancelled call's: nothing more is kept
    checked: bool = False  # its head was looked at for a cancelled call's id
    cancelled: bool = False
    cut: Head | None = None
    answered: bool = False
    tail: bytes = b""


class Lines:
    """Cuts a server's output into the SDK's `SessionMessage`s (or parse errors, as the
    SDK's own reader hands them on), reading no line past `max_bytes`. The transport
    tells it of each message the client writes (`sent`), so that it knows which calls
    wait and which were cancelled."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_RESULT_BYTES) -> None:
        self.max_bytes = max_bytes
        self.waiting: set[str] = set()
        self.cancelled: OrderedDict[str, None] = OrderedDict()

    def sent(self, message: Any) -> None:
        """Note a message the client wrote: a request waits; a cancel gives one up."""
        from mcp_types import JSONRPCNotification, JSONRPCRequest

        if isinstance(message, JSONRPCRequest):
            self.waiting.add(str(message.id))
        elif isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
            request = (message.params or {}).get("requestId")
            if request is not None:
                self.waiting.discard(str(request))
                self.cancelled[str(request)] = None
                while len(self.cancelled) > CANCELLED_KEPT:
                    self.cancelled.popitem(last=False)

    async def pump(self, stdout: Any, deliver: Deliver) -> None:
        """Read `stdout` (anyio's byte stream) to its end, handing each message to `deliver`.
        Raises `UnknownCut` when a cut line's call cannot be told."""
        line = _Line()
        while True:
            try:
                chunk = await stdout.receive(CHUNK_BYTES)
            except anyio.EndOfStream:
                return
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                await self._take(line, chunk[start:] if end < 0 else chunk[start:end], deliver)
                if end < 0:
                    break
                await self._end(line, deliver)
                line, start = _Line(), end + 1

    async def _take(self, line: _Line, piece: bytes, deliver: Deliver) -> None:
        line.size += len(piece)
        if line.discarding:
            line.tail = (line.tail + piece[-TAIL_BYTES:])[-TAIL_BYTES:]
            return
        line.parts.append(piece)
        if not line.checked and line.size >= HEAD_BYTES:
            line.checked = True
            if self._is_cancelled(_id(HEAD_ID, b"".join(line.parts)[:HEAD_BYTES])):
                line.parts, line.discarding, line.cancelled = [], True, True
                return
        if line.size > self.max_bytes:
            head = b"".join(line.parts)[: self.max_bytes]
            line.parts, line.discarding, line.tail = [], True, piece[-TAIL_BYTES:]
            line.cut = await anyio.to_thread.run_sync(read_head, head)
            del head
            if line.cut.id is not None and line.cut.method is None:
                line.answered = True
                await self._answer_cut(line.cut.id, line.cut, deliver)

    async def _end(self, line: _Line, deliver: Deliver) -> None:
        if line.cancelled:
            return
        if line.cut is None:
            data = b"".join(line.parts)
            if len(data) > THREAD_PARSE_BYTES:
                request = _id(HEAD_ID, data[:HEAD_BYTES])
                if request is None:
                    request = _id(TAIL_ID, data[-TAIL_BYTES:])
                if self._is_cancelled(request):
                    return  # its call was given up: not parsed
                message = await anyio.to_thread.run_sync(parse_line, data)
            else:
                message = parse_line(data)
            answered = getattr(getattr(message, "message", None), "id", None)
            if answered is not None and not hasattr(message.message, "method"):
                self.waiting.discard(str(answered))
            await deliver(message)
            return
        if line.answered:
            return
        if line.cut.method is not None:
            logger.warning(
                "An MCP server sent a %r message of more than %d bytes "
                "(ORACLE_TOOL_RESULT_MAX_BYTES): Oracle dropped it",
                line.cut.method[:100],
                self.max_bytes,
            )
            return
        found = _id(TAIL_ID, line.tail)
        if found is None and len(self.waiting) == 1:
            found = _key_value(next(iter(self.waiting)))
        if found is None:
            raise UnknownCut(
                f"an MCP server answered with a line of {line.size:,} bytes, over "
                f"ORACLE_TOOL_RESULT_MAX_BYTES ({self.max_bytes:,}), and its call could not "
                "be told among those waiting: its connection is ended and made again"
            )
        if not self._is_cancelled(found):
            await self._answer_cut(found, line.cut, deliver)

    async def _answer_cut(self, request: str | int, head: Head, deliver: Deliver) -> None:
        """Answer the call `request` with the error a cut result is (see `cut_result`)."""
        from mcp.shared.message import SessionMessage

        self.waiting.discard(str(request))
        await deliver(SessionMessage(cut_error(request, head, self.max_bytes)))

    def _is_cancelled(self, request: str | int | None) -> bool:
        return request is not None and str(request) in self.cancelled


def parse_line(line: bytes) -> Any:
    """One whole line as the SDK's `SessionMessage`, or the parse error as a value (as the
    SDK's own stdio reader hands it to the session)."""
    import mcp_types
    from mcp.shared.message import SessionMessage

    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as error:
        logger.warning("An MCP server wrote a line that is not JSON-RPC: %s", str(error)[:300])
        return error
    return SessionMessage(message)


def read_head(head: bytes) -> Head:
    """What the beginning of a cut line holds: its id and method, and the content blocks
    it has whole (the last one kept only when it is text, its beginning)."""
    import pydantic_core
    from mcp_types import ContentBlock
    from pydantic import TypeAdapter, ValidationError

    text = codecs.getincrementaldecoder("utf-8")("replace").decode(head)  # a cut character dropped
    try:
        data = pydantic_core.from_json(text, allow_partial="trailing-strings")
    except ValueError:
        return Head()
    if not isinstance(data, dict):
        return Head()
    request = data.get("id")
    method = data.get("method")
    found = Head(
        id=request if isinstance(request, str | int) and not isinstance(request, bool) else None,
        method=method if isinstance(method, str) else None,
    )
    result = data.get("result")
    if not isinstance(result, dict):
        return found
    blocks = result.get("content")
    blocks = blocks if isinstance(blocks, list) else []
    if blocks:  # the last may be cut: the beginning of a text is kept, of a picture not
        last = blocks[-1] if isinstance(blocks[-1], dict) else {}
        begun = last.get("text")
        if isinstance(begun, str) and last.get("type", "text") == "text":
            blocks[-1] = {"type": "text", "text": begun}  # its type may come after the cut
        else:
            blocks = blocks[:-1]
    adapter: TypeAdapter[Any] = TypeAdapter(ContentBlock)
    for block in blocks:
        try:
            found.content.append(adapter.validate_python(block).model_dump(by_alias=True))
        except ValidationError:
            continue
    structured = result.get("structuredContent")
    if not found.content and structured is not None:
        found.content.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    return found


def cut_result(error: Any) -> Any:
    """The SDK's `CallToolResult` of a `RESULT_TOO_LARGE` error: the content read before
    the cut, with the number of bytes read in its `_meta` (`agents.mcp_results` words
    the note to the model)."""
    from mcp_types import CallToolResult

    data = error.data if isinstance(error.data, dict) else {}
    return CallToolResult(
        content=list(data.get("content") or []),
        _meta={CUT_META: {"read": int(data.get("read") or 0)}},
    )


def _id(pattern: re.Pattern[bytes], data: bytes) -> str | int | None:
    match = pattern.search(data)
    if match is None:
        return None
    try:
        value = json.loads(match[1])
    except ValueError:
        return None
    return value if isinstance(value, str | int) else None


def _key_value(key: str) -> str | int:
    """A waiting call's id as the SDK wrote it (its ids are whole numbers)."""
    return int(key) if key.lstrip("-").isdigit() else key


def cut_error(request: str | int, head: Head, max_bytes: int) -> JSONRPCError:
    """The JSON-RPC error a cut answer to the call `request` is (`mcp_server` makes it a
    cut result): the content its beginning holds, and how much was read."""
    from mcp_types import ErrorData, JSONRPCError

    error = ErrorData(
        code=RESULT_TOO_LARGE,
        message=(
            f"the answer was larger than {max_bytes:,} bytes "
            "(ORACLE_TOOL_RESULT_MAX_BYTES); Oracle stopped reading it there"
        ),
        data={"content": head.content, "read": max_bytes},
    )
    return JSONRPCError(jsonrpc="2.0", id=request, error=error)
