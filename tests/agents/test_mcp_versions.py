"""The MCP protocol versions Oracle negotiates, and how a Stop cancels a call under each.

The SDK (`mcp` 2.3) offers the current revision, 2026-07-28 (stateless: no handshake),
and falls back to the handshake's newest, 2025-11-25, for a server that does not know
it. A Stop cancels a call as the negotiated revision says: over stdio, and over
Streamable HTTP before 2026-07-28, with `notifications/cancelled`; over Streamable HTTP
at 2026-07-28, by closing the request's stream. Our testing server notes each call it
saw cancelled (`ORACLE_TEST_CANCEL_MARKER`), whichever way the cancel came.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from agents.cancel import CancelToken
from agents.mcp import McpHub
from agents.mcp_config import parse_mcp_config
from agents.testing.scripted import Call, Reply
from agents.tools import ToolRegistry
from tests import processes
from tests.mcp.served import EVERYTHING, NODE, ROOT, free_port, listening, mcp_testing_server

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def marker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("versions") / "cancelled.txt"


@pytest.fixture(scope="module")
def testing_over_http(marker: Path) -> Iterator[str]:
    """Our testing server (the official SDK's server) over Streamable HTTP."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ORACLE_TEST_CANCEL_MARKER": str(marker)}
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp.testing_server", "--http", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        processes.wait_for(lambda: listening(port), 60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(10)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub(marker: Path, testing_over_http: str) -> AsyncIterator[McpHub]:
    config = parse_mcp_config(
        {
            "mcpServers": {
                "stdio": mcp_testing_server(env={"ORACLE_TEST_CANCEL_MARKER": str(marker)}),
                "http": {"url": testing_over_http},
                "everything": {"command": NODE, "args": [str(EVERYTHING), "stdio"]},
            }
        }
    )
    hub = McpHub(config.servers, startup_timeout=60)
    await hub.start()
    yield hub
    await hub.close()


def negotiated(hub: McpHub, name: str) -> str:
    return str(hub.servers[name]._client.protocol_version)


async def test_the_current_revision_where_the_server_has_it_else_the_handshakes(hub):
    assert {name: negotiated(hub, name) for name in hub.servers} == {
        "stdio": "2026-07-28",
        "http": "2026-07-28",
        "everything": "2025-11-25",  # server-everything knows only the handshake
    }


@pytest.mark.parametrize("server", ["stdio", "http"])
async def test_a_stop_cancels_the_call_the_way_its_revision_says(hub, run, marker, server):
    before = marker.read_text().count("cancelled") if marker.exists() else 0
    cancel = CancelToken()

    async def stop_soon() -> float:
        await asyncio.sleep(1.0)
        cancel.cancel()
        return time.monotonic()

    stopper = asyncio.create_task(stop_soon())
    outcome = await run(
        [Reply(calls=[Call(f"{server}__sleep", {"seconds": 30})]), Reply(text="unreachable")],
        tools=ToolRegistry([hub.tool(offered) for offered in hub.tools()]),
        cancel=cancel,
    )

    assert outcome.reason == "cancelled"
    assert time.monotonic() - await stopper < 1.0
    # The server saw the call cancelled: by `notifications/cancelled` over stdio, by its
    # request's stream closed over HTTP at 2026-07-28 (the SDK sends no notification).
    for _ in range(100):  # waiting on the loop: the SDK closes the stream on it
        if marker.exists() and marker.read_text().count("cancelled") == before + 1:
            break
        await asyncio.sleep(0.1)
    assert marker.read_text().count("cancelled") == before + 1
    echoed = await hub.servers[server].call("echo", {"text": "still here"})
    assert echoed.content[0].text == "still here"
