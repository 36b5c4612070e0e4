"""A remote MCP server's big answer costs a worker no more than ORACLE_TOOL_RESULT_MAX_BYTES
either (issue 38, finding 6, for Streamable HTTP and SSE).

Our testing server (`tests/mcp/testing_server.py`, the official SDK's server) is served
the three ways a remote server answers: Streamable HTTP with each answer an SSE stream
(the SDK's default), Streamable HTTP with each answer a JSON body (`json_response`), and
the old SSE transport (every answer an event of one long stream). Its `huge` returns 30 MB.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from agents.mcp import McpHub
from agents.mcp_config import parse_mcp_config
from agents.mcp_lines import RESULT_TOO_LARGE
from agents.testing.scripted import Call, Reply
from agents.tools import ToolRegistry
from tests import processes
from tests.agents.test_mcp_bytes import LoopLag, peak_megabytes, reset_peak
from tests.mcp.served import ROOT, free_port, listening

pytestmark = pytest.mark.asyncio(loop_scope="module")

NOTE = "(ORACLE_TOOL_RESULT_MAX_BYTES), so Oracle stopped reading it there"
# A tool that says something first: the SDK's server then answers as an SSE stream.
TOLD = """
from tests.mcp.testing_server import READ_ONLY, Context, server

async def told(chars: int, ctx: Context) -> str:
    await ctx.report_progress(0, 1, "starting")
    return "x" * chars

server.add_tool(told, description="Say it starts, then answer.", annotations=READ_ONLY)
"""
SERVE = {
    "events": "server.run('streamable-http', host='127.0.0.1', port={port})",
    "json": "server.run('streamable-http', host='127.0.0.1', port={port}, json_response=True)",
    "sse": "server.run('sse', host='127.0.0.1', port={port})",
}


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, str]]:
    """The testing server over each of the three, by name: its address."""
    started, addresses = [], {}
    try:
        for name, run in SERVE.items():
            port = free_port()
            script = TOLD + run.format(port=port)
            started.append(
                subprocess.Popen(
                    [sys.executable, "-c", script],
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            processes.wait_for(lambda port=port: listening(port), 60)
            path = "sse" if name == "sse" else "mcp"
            addresses[name] = f"http://127.0.0.1:{port}/{path}"
        yield addresses
    finally:
        for server in started:
            server.terminate()
            server.wait(10)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub(served: dict[str, str]) -> AsyncIterator[McpHub]:
    """A worker's hub of the three, at the default cap of 4 MiB a message."""
    servers = {name: {"url": url, "timeout_seconds": 20} for name, url in served.items()}
    servers["sse"]["transport"] = "sse"
    hub = McpHub(
        parse_mcp_config({"mcpServers": servers}).servers,
        max_result_chars=10_000,
        startup_timeout=30,
    )
    await hub.start()
    yield hub
    await hub.close()


def registry(hub: McpHub) -> ToolRegistry:
    return ToolRegistry([hub.tool(offered) for offered in hub.tools()])


async def call_in_a_run(run, hub: McpHub, name: str, chars: int) -> tuple[str, list[Any]]:
    """What a run's call of `told` on the server `name` gets, and its progress events."""
    outcome = await run(
        [Reply(calls=[Call(f"{name}__told", {"chars": chars})]), Reply(text="Seen.")],
        tools=registry(hub),
    )
    (result,) = outcome.events.of_type("tool.result")
    return result["content"], outcome.events.of_type("tool.progress")


# The cap, and an answer under it (the SDK's server sends a tool's text twice: as its
# content and its structured content). The old SSE transport's cap is the SDK's limit on
# an event (1 MiB) less Oracle's margin.
CAPS = {"events": (4_194_304, 1_500_000), "json": (4_194_304, 1_500_000), "sse": (983_040, 400_000)}


@pytest.mark.parametrize("name", ["events", "json", "sse"])
async def test_an_80_mb_answer_is_cut_while_read_and_the_connection_goes_on(hub, run, name):
    cap, under = CAPS[name]
    await call_in_a_run(run, hub, name, 10)
    reset_peak()
    before = peak_megabytes()
    started = time.monotonic()

    async with LoopLag() as loop:
        content, progress = await call_in_a_run(run, hub, name, 80_000_000)

    took = time.monotonic() - started
    grew = peak_megabytes() - before
    assert took < 5, f"the 80 MB answer took {took:.1f} s"
    # What the cut answer costs is what an answer of the cap's size costs (the SDK's SSE
    # parser makes several copies of one: a 3 MB answer grows the process by about 30 MB).
    assert grew < 50, f"the process grew by {grew:.0f} MB reading an 80 MB answer"
    assert max(loop.lags) < 0.2, f"the event loop was {max(loop.lags) * 1000:.0f} ms late"
    assert content.startswith("x" * 10_000 + "\n[Cut by Oracle: the result was larger")
    assert f"than {cap:,} bytes " + NOTE in content
    if name != "json":  # a JSON answer carries no notices; the others said one first
        assert [event["message"] for event in progress] == ["starting"]
    # The same connection answers the next calls, and an answer under the cap is whole.
    content, _ = await call_in_a_run(run, hub, name, under)
    assert content.endswith(
        f"the result had {under:,} characters and only the first 10,000 "
        "are shown. Ask for less (a narrower query, a page) if you need the rest.]"
    )
    assert (await registry(hub).run("c1", f"{name}__echo", '{"text": "again"}')).content == "again"
    assert hub.servers[name].starts == 1


async def test_other_servers_calls_go_on_while_a_big_answer_is_cut(hub):
    tools = registry(hub)
    big = asyncio.create_task(tools.run("c1", "json__huge", '{"chars": 80000000}'))
    slowest = 0.0
    while not big.done():
        began = time.monotonic()
        assert (await tools.run("c2", "events__echo", '{"text": "small"}')).ok
        slowest = max(slowest, time.monotonic() - began)
        await asyncio.sleep(0.05)

    assert NOTE in (await big).content
    assert slowest < 0.5, f"a small call took {slowest * 1000:.0f} ms"


# --- a shared stream (the old SSE transport's), against the events other servers write ---


async def read_events(stream: bytes, cap: int = 1 << 20) -> list[Any]:
    """The SSE events the SDK's parser gets of `stream` (a GET, no call of its own)
    through Oracle's transport, cut at `cap`."""
    import httpx2

    from agents.mcp_http_bytes import BoundedTransport

    def serve(request: httpx2.Request) -> httpx2.Response:
        chunks = [stream[at : at + 65536] for at in range(0, len(stream), 65536)]
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, stream=Chunks(chunks)
        )

    transport = BoundedTransport(cap, inner=httpx2.MockTransport(serve))
    async with (
        httpx2.AsyncClient(transport=transport) as client,
        client.stream("GET", "http://server/sse") as response,
    ):
        return [sse async for sse in httpx2.EventSource(response, max_event_size=None)]


class Chunks:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        pass


def event(data: bytes) -> bytes:
    return b"event: message\r\ndata: " + data + b"\r\n\r\n"


async def test_an_answer_whose_id_comes_last_is_cut_and_matched_and_the_stream_goes_on():
    big = b'{"result":{"content":[{"type":"text","text":"' + b"y" * 3_000_000 + b'"}]},'
    stream = event(big + b'"jsonrpc":"2.0","id":5}') + event(b'{"jsonrpc":"2.0","id":4}')

    cut, after = await read_events(stream)

    answer = json.loads(cut.data)
    assert answer["id"] == 5 and answer["error"]["code"] == RESULT_TOO_LARGE
    (block,) = answer["error"]["data"]["content"]
    assert block["text"].startswith("yyy") and len(block["text"]) < 1 << 20
    assert json.loads(after.data) == {"jsonrpc": "2.0", "id": 4}


async def test_a_notice_over_the_cap_is_dropped_and_reading_goes_on():
    notice = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'
    stream = event(notice + b"n" * 3_000_000 + b'"}}') + event(b'{"jsonrpc":"2.0","id":1}')

    (after,) = await read_events(stream)

    assert json.loads(after.data) == {"jsonrpc": "2.0", "id": 1}


async def test_a_cut_answer_whose_call_cannot_be_told_ends_the_stream():
    from agents.mcp_http_bytes import UnknownCut

    stream = event(b'{"result":{"content":[{"type":"text","text":"' + b"q" * 3_000_000 + b'"}]}}')

    with pytest.raises(UnknownCut, match="its connection is ended and made again"):
        await read_events(stream)
