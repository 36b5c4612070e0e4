"""A server's life as Oracle keeps it: a server hung by a call is restarted, one that
dies shows "stopped" at once, one that answers a cancel is left alone, and servers start
in the background, a mute one delaying none of the others. Real servers over stdio:
our testing server, `mcp-server-time`, and a command that never answers its handshake.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

import pytest

from agents.mcp import McpHub, McpServer
from agents.mcp_config import parse_mcp_config
from agents.tools import ToolError
from tests.mcp.served import mcp_testing_server, mcp_time_server

MUTE = {"command": sys.executable, "args": ["-c", "import time; time.sleep(600)"]}


def config_of(name: str, entry: dict[str, object]):  # type: ignore[no-untyped-def]
    (config,) = parse_mcp_config({"mcpServers": {name: entry}}).servers
    return config


def watched(server: McpServer) -> list[str]:
    """The states `server` goes through from now on, as its worker is told them."""
    seen: list[str] = []
    server.on_change = lambda changed: seen.append(changed.state)
    return seen


async def until(condition, *, within: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "it did not happen in time"
        await asyncio.sleep(0.02)


async def pid_of(server: McpServer) -> int:
    return int((await server.call("pid", {})).content[0].text)


async def test_a_call_that_hangs_its_server_restarts_it_before_the_next_call():
    server = McpServer(config_of("testing", mcp_testing_server(timeout_seconds=1)), hang_grace=1.0)
    try:
        first = await pid_of(server)
        seen = watched(server)
        reasons: list[str] = []
        server.on_change = lambda changed: (
            seen.append(changed.state),
            reasons.append(changed.error),
        )
        started = time.monotonic()

        with pytest.raises(ToolError, match=r"did not answer within 1 s"):
            await server.call("block", {"seconds": 60})
        # At once: it waits for the probe's verdict and the restart, not the block's 60 s.
        again = await pid_of(server)

        assert again != first
        assert time.monotonic() - started < 15
        assert seen[-2:] == ["restarting", "ready"] and server.error == ""
        assert any("answered nothing within 1 s" in text for text in reasons)
        assert server.starts == 2
    finally:
        await server.close()


async def test_a_cancelled_call_whose_server_answers_leaves_the_server_alone():
    server = McpServer(config_of("testing", mcp_testing_server()), hang_grace=0.5)
    try:
        first = await pid_of(server)
        call = asyncio.create_task(server.call("sleep", {"seconds": 30}))
        await asyncio.sleep(0.5)
        call.cancel()  # as Stop does
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.sleep(1.5)  # past the grace: the server answered in it

        assert await pid_of(server) == first
        assert (server.starts, server.state) == (1, "ready")
    finally:
        await server.close()


async def test_a_killed_server_shows_stopped_at_once_without_a_call():
    server = McpServer(config_of("testing", mcp_testing_server()))
    try:
        pid = await pid_of(server)
        seen = watched(server)

        os.kill(pid, signal.SIGKILL)
        await until(lambda: server.state == "stopped", within=3)

        assert seen == ["stopped"]
        assert "its process exited" in server.error
        assert await pid_of(server) != pid  # the next call starts it again
        assert server.state == "ready"
    finally:
        await server.close()


async def test_servers_start_in_the_background_and_a_mute_one_delays_no_other():
    config = parse_mcp_config({"mcpServers": {"time": mcp_time_server(), "mute": MUTE}})
    hub = McpHub(config.servers)
    told: list[tuple[str, str]] = []
    hub.on_change = lambda server: told.append((server.name, server.state))
    began = time.monotonic()

    hub.launch()
    launched = time.monotonic() - began
    try:
        assert launched < 0.1
        await asyncio.sleep(0.05)
        assert {name for name, state in told if state == "starting"} == {"time", "mute"}
        await until(lambda: hub.servers["time"].state == "ready", within=20)

        assert time.monotonic() - began < 20  # not the mute one's 30 s
        assert hub.servers["mute"].state == "starting"
        assert ("time", "ready") in told
        assert {tool.server for tool in hub.tools()} == {"time"}
        assert hub.starting() == ["mute"]
        assert hub.starting({"time"}) == []
    finally:
        closing = time.monotonic()
        await hub.close()
    assert time.monotonic() - closing < 10
    assert hub.servers["mute"].state == "stopped"
