"""A remote MCP server's answers (Streamable HTTP, SSE), never read past a byte cap.

The SDK's HTTP transports read a JSON answer whole (`response.aread()`) and an SSE event
up to a fixed 1 MiB, past which the whole stream fails as if the connection were lost (a
30 MB JSON answer grew the worker by its size several times over). `BoundedTransport`
sits under the SDK's HTTP client and counts an answer's bytes as they arrive: a JSON body,
or one SSE event (the bytes since the last blank line), is held until it is whole and
handed on only then; past `max_bytes` (ORACLE_TOOL_RESULT_MAX_BYTES) nothing more of it
is kept, and the SDK is handed in its place the error a cut answer is
(`agents.mcp_lines.RESULT_TOO_LARGE`, with the content its kept beginning holds), so the
call gets that beginning and a note, as a stdio server's does. A call's own answer (each
Streamable HTTP request has its own response) is then closed, not read on; a shared
stream (the old SSE transport's, the Streamable HTTP GET) has the rest of that event
thrown away as it arrives, and goes on. A notice or request from the server past the cap
is dropped; an answer whose call cannot be told ends the stream (the connection is made
again), rather than a call waiting out its timeout. An answer to a call the client
cancelled is thrown away unparsed.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread
import httpx2

from agents.mcp_lines import (
    CANCELLED,
    CANCELLED_KEPT,
    HEAD_BYTES,
    HEAD_ID,
    TAIL_BYTES,
    TAIL_ID,
    Head,
    _id,
    cut_error,
    read_head,
)

logger = logging.getLogger(__name__)

# The end of an SSE event: a line ending, then an empty line ("\r\n" is one ending).
_ENDING = rb"(?:\r\n|\r(?!\n)|\n)"
EVENT_END = re.compile(_ENDING + _ENDING)
LINE = re.compile(_ENDING)
DATA = re.compile(rb"(?:\A|[\r\n])data: ?")
# The SDK reads no event of the old SSE transport past this (not configurable there).
SDK_SSE_EVENT_BYTES = 1024 * 1024
SSE_MARGIN_BYTES = 64 * 1024  # room in an event for the cut answer's own framing


class UnknownCut(httpx2.ReadError):
    """An answer past the cap whose call cannot be told: the stream must end."""


class BoundedTransport(httpx2.AsyncBaseTransport):
    """httpx2's own transport, each answer's body bounded to `max_bytes` a message."""

    def __init__(self, max_bytes: int, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.max_bytes = max_bytes
        self.inner = inner if inner is not None else httpx2.AsyncHTTPTransport()
        self.cancelled: OrderedDict[str, None] = OrderedDict()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["accept-encoding"] = "identity"  # counted as the SDK would read it
        request_id = self._note(request)
        response = await self.inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        headers = response.headers.copy()
        decoder = _decoder(headers.pop("content-encoding", "identity"))
        body = Body(self, response.stream, request_id, events=kind == "text/event-stream")
        body.decoder = decoder
        return httpx2.Response(
            response.status_code, headers=headers, stream=body, extensions=response.extensions
        )

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _note(self, request: httpx2.Request) -> str | int | None:
        """The id of the call `request` makes, if it makes one; a cancel is remembered."""
        if request.method != "POST" or not request.content:
            return None
        from mcp_types import JSONRPCNotification, JSONRPCRequest, jsonrpc_message_adapter

        try:
            message = jsonrpc_message_adapter.validate_json(request.content, by_name=False)
        except ValueError:
            return None
        if isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
            cancelled = (message.params or {}).get("requestId")
            if cancelled is not None:
                self.cancelled[str(cancelled)] = None
                while len(self.cancelled) > CANCELLED_KEPT:
                    self.cancelled.popitem(last=False)
        return message.id if isinstance(message, JSONRPCRequest) else None

    def is_cancelled(self, request: str | int | None) -> bool:
        return request is not None and str(request) in self.cancelled


class Body(httpx2.AsyncByteStream):
    """One answer's body, handed on a whole message at a time, none past the cap."""

    def __init__(
        self, owner: BoundedTransport, upstream: Any, request_id: Any, *, events: bool
    ) -> None:
        self.owner, self.upstream, self.request_id = owner, upstream, request_id
        self.events, self.max_bytes = events, owner.max_bytes
        self.decoder: Any = None

    async def aclose(self) -> None:
        await self.upstream.aclose()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        held = bytearray()
        scanned = 0  # where the next search for an event's end starts
        skipping = False  # the rest of a cut event is thrown away
        untold: Head | None = None  # a cut answer whose call only its end can tell
        tail = last = b""  # a skipped event's last bytes; the chunk before's last three
        try:
            async for raw in self.upstream:
                if self.owner.is_cancelled(self.request_id):
                    return  # its call was given up: the rest is not read
                chunk = self.decoder.decode(raw) if self.decoder is not None else raw
                if skipping:
                    window = last + chunk
                    found = EVENT_END.search(window)
                    if found is None:
                        tail, last = (tail + chunk)[-TAIL_BYTES:], window[-3:]
                        continue
                    if untold is not None:
                        for piece in self._told_by_tail(untold, tail + window[: found.start()]):
                            yield piece
                    skipping, untold, chunk = False, None, window[found.end() :]
                held += chunk
                if self.events:
                    end = _last_end(held, scanned)
                    if end:
                        yield bytes(held[:end])
                        del held[:end]
                    scanned = max(0, len(held) - 3)
                if len(held) > self.max_bytes:
                    tail, last = bytes(held[-TAIL_BYTES:]), bytes(held[-3:])
                    del held[self.max_bytes :]
                    kept, held, scanned = held, bytearray(), 0
                    answer, untold = await self._cut(kept)
                    for piece in answer:
                        yield piece
                    if not self.events or (answer and self.request_id is not None):
                        return  # a call's own answer: not read on
                    skipping = True
            if self.decoder is not None:
                held += self.decoder.flush()
            if held and not skipping:
                yield bytes(held)
        finally:
            await self.upstream.aclose()

    async def _cut(self, kept: bytearray) -> tuple[list[bytes], Head | None]:
        """What the SDK gets in place of a message past the cap, `kept` its beginning
        (nothing for a notice or a cancelled call's answer), and that beginning when it
        is an answer whose call only the message's end can tell."""
        data = _event_data(kept) if self.events else bytes(kept)
        kept.clear()
        if self.owner.is_cancelled(_id(HEAD_ID, data[:HEAD_BYTES])):
            return [], None
        head = await anyio.to_thread.run_sync(read_head, data)
        del data
        if head.method is not None:
            logger.warning(
                "An MCP server sent a %r message of more than %d bytes "
                "(ORACLE_TOOL_RESULT_MAX_BYTES): Oracle dropped it",
                head.method[:100],
                self.max_bytes,
            )
            return [], None
        answered = self.request_id if self.request_id is not None else head.id
        if answered is None:
            return [], head
        return ([] if self.owner.is_cancelled(answered) else self._answer(answered, head)), None

    def _told_by_tail(self, head: Head, tail: bytes) -> list[bytes]:
        """The cut answer of an event whose call only its end tells (the TypeScript SDK
        writes the id last); `UnknownCut` when the end does not tell it either."""
        answered = _id(TAIL_ID, tail[-TAIL_BYTES:])
        if answered is None:
            raise UnknownCut(
                "an MCP server answered with an event over ORACLE_TOOL_RESULT_MAX_BYTES "
                f"({self.max_bytes:,} bytes) whose call could not be told: its connection "
                "is ended and made again"
            )
        return [] if self.owner.is_cancelled(answered) else self._answer(answered, head)

    def _answer(self, request: str | int, head: Head) -> list[bytes]:
        """The cut answer to `request`, in pieces (no copy of it made to join them)."""
        body = cut_answer(request, head, self.max_bytes)
        return [b"event: message\ndata: ", body, b"\n\n"] if self.events else [body]


def cut_answer(request: str | int, head: Head, max_bytes: int) -> bytes:
    """The JSON-RPC error a cut answer to the call `request` is (as `agents.mcp_lines`
    makes it for a stdio server): the content its beginning holds, how much was read."""
    message = cut_error(request, head, max_bytes)
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode()


def sse_cap(max_bytes: int) -> int:
    """The cap on one event of the old SSE transport: the SDK reads none past 1 MiB."""
    return min(max_bytes, SDK_SSE_EVENT_BYTES - SSE_MARGIN_BYTES)


def _last_end(held: bytearray, start: int) -> int:
    """Where the last whole event in `held` ends (0: none yet), searched from `start`."""
    end = 0
    for found in EVENT_END.finditer(held, start):
        end = found.end()
    return end


def _event_data(event: bytearray) -> bytes:
    """The data of an SSE event (its `data:` lines joined), a cut one's too."""
    found = DATA.search(event)
    if found is None:
        return b""
    data = bytes(memoryview(event)[found.end() :])  # a server's JSON is one line
    if LINE.search(data) is None:
        return data
    lines = LINE.split(data)
    more = (line for line in lines[1:] if line.startswith(b"data:"))
    rest = [line[6:] if line[5:6] == b" " else line[5:] for line in more]
    return b"\n".join([lines[0], *rest])


def _decoder(encoding: str) -> Any:
    """A decoder of a body a server compressed though asked not to (None: plain)."""
    from httpx2._decoders import SUPPORTED_DECODERS

    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    return SUPPORTED_DECODERS[encoding]()
