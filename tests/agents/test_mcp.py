"""Tools from MCP servers, through `McpHub` and the engine loop.

Real servers no one here wrote: `mcp-server-time` (PyPI) over stdio and
`@modelcontextprotocol/server-everything` (npm, `tests/mcp/package.json`) over stdio,
Streamable HTTP and SSE. Our testing server (`tests/mcp/testing_server.py`) brings the
slow, dying, enormous and hostile tools. Each server starts once for the module.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from agents.cancel import CancelToken
from agents.clock import Clock
from agents.events import EventCollector
from agents.loop import continue_run
from agents.mcp import McpHub, McpServer, child_environment
from agents.mcp_config import McpServerConfig, parse_mcp_config
from agents.testing.scripted import Call, Reply
from agents.tools import ToolError, ToolRegistry
from tests.mcp.served import (
    EVERYTHING,
    NODE,
    everything_served,
    free_port,
    mcp_testing_server,
    mcp_time_server,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

SECRETS = ("SECRET_KEY", "DATABASE_URL", "OPENAI_API_KEY")


@pytest.fixture(scope="module")
def cancel_marker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file our testing server appends "cancelled" to when a call is cancelled."""
    return tmp_path_factory.mktemp("mcp") / "cancelled.txt"


@pytest.fixture(scope="module")
def remote_urls() -> Iterator[dict[str, str]]:
    with everything_served("streamableHttp") as http, everything_served("sse") as sse:
        yield {"http": http, "sse": sse}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub(cancel_marker: Path, remote_urls: dict[str, str]) -> AsyncIterator[McpHub]:
    marker = {"ORACLE_TEST_CANCEL_MARKER": str(cancel_marker)}
    config = parse_mcp_config(
        {
            "mcpServers": {
                "time": mcp_time_server(),
                "everything": {"command": NODE, "args": [str(EVERYTHING), "stdio"]},
                "everything_http": {"url": remote_urls["http"]},
                "everything_sse": {"url": remote_urls["sse"], "transport": "sse"},
                "hurried": {
                    "command": NODE,
                    "args": [str(EVERYTHING), "stdio"],
                    "timeout_seconds": 0.5,
                },
                "testing": mcp_testing_server("--hostile", env=marker),
                "exits": mcp_testing_server("--exit-at-once", env=marker),
                "missing": {"command": "/nonexistent/mcp-server"},
                "off": {"command": NODE, "args": [str(EVERYTHING)], "enabled": False},
            }
        }
    )
    assert config.problems == ()
    hub = McpHub(config.servers, max_result_chars=10_000, startup_timeout=30)
    await hub.start()
    yield hub
    await hub.close()


def registry(hub: McpHub) -> ToolRegistry:
    return ToolRegistry([hub.tool(offered) for offered in hub.tools()])


def states(hub: McpHub) -> dict[str, str]:
    return {row["name"]: row["state"] for row in hub.status()}


def cancellations(marker: Path) -> int:
    return marker.read_text().count("cancelled") if marker.exists() else 0


async def until(condition, *, within: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "it did not happen in time"
        await asyncio.sleep(0.02)


# --- real servers no one here wrote ------------------------------------------------


async def test_it_lists_the_tools_of_servers_no_one_here_wrote(hub):
    offered = {tool.name: tool for tool in hub.tools()}

    assert {"time__get_current_time", "time__convert_time"} <= set(offered)
    for server in ("everything", "everything_http", "everything_sse"):
        for tool in ("echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"):
            assert f"{server}__{tool}" in offered
    echo = offered["everything_http__echo"]
    assert (echo.server, echo.tool, echo.description) == (
        "everything_http",
        "echo",
        "Echoes back the input string",
    )
    assert echo.input_schema["properties"]["message"]["type"] == "string"
    for server in ("time", "everything", "everything_http", "everything_sse", "testing"):
        assert states(hub)[server] == "ready"


@pytest.mark.parametrize("server", ["everything", "everything_http", "everything_sse"])
async def test_a_call_reaches_server_everything_over_each_transport(hub, server):
    tools = registry(hub)

    echo = await tools.run("c1", f"{server}__echo", '{"message": "hello"}')
    total = await tools.run("c2", f"{server}__get-sum", '{"a": 2, "b": 40}')

    assert (echo.ok, echo.content) == (True, "Echo: hello")
    assert (total.ok, total.content) == (True, "The sum of 2 and 40 is 42.")


async def test_a_call_reaches_the_time_server_from_pypi(hub):
    result = await registry(hub).run("c1", "time__get_current_time", '{"timezone": "UTC"}')

    assert result.ok
    assert json.loads(result.content)["timezone"] == "UTC"


async def test_an_is_error_result_is_a_tool_error_with_the_servers_words(hub):
    tools = registry(hub)

    time_result = await tools.run("c1", "time__get_current_time", '{"timezone": "Mars/Base"}')
    everything = await tools.run("c2", "everything__get-resource-reference", '{"resourceId": 0}')

    assert not time_result.ok and "Invalid timezone" in time_result.content
    assert (everything.ok, everything.content) == (
        False,
        "Error: Invalid resourceId: 0. Must be a finite positive integer.",
    )


async def test_arguments_that_break_the_tools_schema_are_refused_before_the_call(hub):
    server = hub.servers["everything_http"]
    calls = server.calls

    result = await registry(hub).run("c1", "everything_http__get-sum", '{"a": "two", "b": 2}')

    assert (result.ok, result.content) == (False, "Error: a: 'two' is not of type 'number'")
    assert server.calls == calls  # the server never heard of it


async def test_an_image_becomes_an_attachment_the_chat_can_show(hub):
    # Imported here, not at collection: the testing server loads the MCP server SDK.
    from tests.mcp.testing_server import PICTURE_PNG

    tools = registry(hub)

    logo = await tools.run("c1", "everything__get-tiny-image", "{}")
    picture = await tools.run("c2", "testing__picture", "{}")

    (attachment,) = logo.attachments
    assert attachment["type"] == "image" and attachment["mime_type"] == "image/png"
    assert base64.b64decode(attachment["data"]).startswith(b"\x89PNG")
    assert re.search(r"\[image \(image/png, [\d,]+ bytes\), shown to the user\]", logo.content)
    size = len(PICTURE_PNG)
    assert picture.content == f"a red disc\n[image (image/png, {size:,} bytes), shown to the user]"
    assert len(picture.attachments) == 1


async def test_resource_links_and_structured_content_become_text(hub):
    tools = registry(hub)

    links = await tools.run("c1", "everything__get-resource-links", '{"count": 2}')
    weather = await tools.run("c2", "everything__get-structured-content", '{"location": "Chicago"}')

    assert "[resource Text Resource 2: demo://resource/dynamic/text/2]" in links.content
    assert set(json.loads(weather.content)) == {"temperature", "conditions", "humidity"}


# --- servers that fail, and hostile ones -------------------------------------------


async def test_servers_that_cannot_start_are_failed_with_a_clear_reason(hub):
    rows = {row["name"]: row for row in hub.status()}

    assert rows["missing"]["state"] == "failed"
    assert rows["missing"]["error"] == "the command was not found (/nonexistent/mcp-server)"
    assert rows["exits"]["state"] == "failed"
    assert rows["exits"]["error"] == (
        "it exited before answering (its error output is in Oracle's log)"
    )
    assert rows["off"]["state"] == "disabled"
    assert not [tool for tool in hub.tools() if tool.server in ("missing", "exits", "off")]
    with pytest.raises(ToolError, match=r"'missing' is unavailable \(the command was not found"):
        await hub.servers["missing"].call("anything", {})
    # The others work all the same.
    assert (await registry(hub).run("c1", "everything__echo", '{"message": "x"}')).ok


async def test_a_failing_server_is_not_started_again_on_every_call():
    exits = ("-c", "raise SystemExit(1)")
    config = McpServerConfig(name="flaky", transport="stdio", command=sys.executable, args=exits)
    server = McpServer(config)

    with pytest.raises(ToolError, match="it exited before answering"):
        await server.call("echo", {})
    with pytest.raises(ToolError, match="Oracle tries it again in 1 s"):
        await server.call("echo", {})
    assert server.starts == 1
    await asyncio.sleep(1.05)
    with pytest.raises(ToolError, match="it exited before answering"):
        await server.call("echo", {})
    with pytest.raises(ToolError, match="Oracle tries it again in 2 s"):
        await server.call("echo", {})
    assert server.starts == 2
    await server.close()


async def test_a_200_character_name_becomes_a_short_unique_name_that_reaches_the_tool(hub):
    from tests.mcp.testing_server import LONG_NAME

    offered = hub.tools()
    (long,) = [tool for tool in offered if tool.tool == LONG_NAME]

    assert len(long.name) <= 64 and re.fullmatch(r"[A-Za-z0-9_-]+", long.name)
    assert long.name.startswith("testing__aaaa")
    assert len({tool.name for tool in offered}) == len(offered)
    # The call goes out under the server's own name for it (which the testing server
    # lists but does not implement: its answer names the tool it was asked for).
    result = await registry(hub).run("c1", long.name, "{}")
    assert result.content == f"Error: Unknown tool: {LONG_NAME}"


async def test_a_name_with_spaces_and_punctuation_is_made_safe(hub):
    names = {tool.tool: tool.name for tool in hub.tools(servers={"testing"})}

    assert names["we ird!"] == "testing__we_ird_"


async def test_a_tool_with_an_invalid_schema_is_left_out_and_shown_on_the_servers_health(hub):
    names = [tool.tool for tool in hub.tools()]
    (row,) = [row for row in hub.status() if row["name"] == "testing"]

    assert "bad_schema" not in names
    (problem,) = row["problems"]
    assert problem.startswith("tool 'bad_schema' left out: its input schema is not valid JSON")


async def test_an_enormous_result_is_cut_with_a_note_to_the_model(hub):
    result = await registry(hub).run("c1", "testing__huge", '{"chars": 300000}')

    assert result.ok
    assert result.content.startswith("x" * 10_000 + "\n[Cut by Oracle: the result had 300,000")
    assert "only the first 10,000 are shown" in result.content
    assert len(result.content) < 10_300


async def test_a_cancelled_call_returns_at_once_tells_the_server_and_leaves_it_usable(
    hub, cancel_marker
):
    server = hub.servers["testing"]
    starts, before = server.starts, cancellations(cancel_marker)
    sleeping = asyncio.Event()
    call = asyncio.create_task(
        server.call("sleep", {"seconds": 30}, on_progress=lambda *_: sleeping.set())
    )
    await asyncio.wait_for(sleeping.wait(), 10)

    started = time.monotonic()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call

    assert time.monotonic() - started < 1.0
    await until(lambda: cancellations(cancel_marker) == before + 1)  # notifications/cancelled
    assert (await registry(hub).run("c1", "testing__echo", '{"text": "still here"}')).ok
    assert server.starts == starts


async def test_a_call_over_the_servers_ceiling_is_cut_and_the_server_stays_usable(hub):
    tools = registry(hub)
    starts = hub.servers["hurried"].starts
    started = time.monotonic()

    result = await tools.run(
        "c1", "hurried__trigger-long-running-operation", '{"duration": 10, "steps": 10}'
    )

    assert time.monotonic() - started < 5  # cut at the ceiling, well before the call's 10 s
    assert (result.ok, result.content) == (
        False,
        "Error: the MCP server 'hurried' did not answer within 0.5 s (its timeout_seconds); "
        "the call was cancelled",
    )
    assert (await tools.run("c2", "hurried__echo", '{"message": "next"}')).content == "Echo: next"
    assert hub.servers["hurried"].starts == starts


async def test_a_server_killed_between_calls_is_started_again_by_the_next_call(hub):
    tools = registry(hub)
    server = hub.servers["testing"]
    pid = int((await tools.run("c1", "testing__pid", "{}")).content)
    starts = server.starts

    os.kill(pid, signal.SIGKILL)
    await until(lambda: states(hub)["testing"] == "stopped")
    result = await tools.run("c2", "testing__echo", '{"text": "back"}')

    assert (result.ok, result.content) == (True, "back")
    assert server.starts == starts + 1
    assert int((await tools.run("c3", "testing__pid", "{}")).content) != pid
    assert states(hub)["testing"] == "ready"


async def test_a_server_that_dies_during_a_call_is_a_tool_error_and_the_next_call_works(hub):
    tools = registry(hub)

    died = await tools.run("c1", "testing__die", "{}")
    after = await tools.run("c2", "testing__echo", '{"text": "again"}')

    assert (died.ok, died.content) == (
        False,
        "Error: the MCP server 'testing' stopped during the call; Oracle starts it again "
        "for the next one",
    )
    assert (after.ok, after.content) == (True, "again")


async def test_a_remote_server_that_restarted_is_connected_to_again():
    port = free_port()
    with everything_served("streamableHttp", port) as url:
        server = McpServer(McpServerConfig(name="remote", transport="http", url=url))
        assert (await server.call("echo", {"message": "one"})).content[0].text == "Echo: one"
    with everything_served("streamableHttp", port):  # a new process: the session is gone
        with pytest.raises(ToolError, match=r"'remote' lost the connection .*connects again"):
            await server.call("echo", {"message": "two"})
        assert (await server.call("echo", {"message": "three"})).content[0].text == "Echo: three"
        assert server.starts == 2
        await server.close()


async def test_a_servers_environment_has_its_config_but_none_of_oracles_secrets(monkeypatch):
    for name in SECRETS:
        monkeypatch.setenv(name, f"{name.lower()}-value")
    everything = (str(EVERYTHING), "stdio")
    config = McpServerConfig(
        name="env", transport="stdio", command=NODE, args=everything, env={"GREETING": "hello"}
    )

    assert not set(SECRETS) & set(child_environment(config))
    server = McpServer(config)
    result = await server.call("get-env", {})
    await server.close()

    environment = json.loads(result.content[0].text)
    assert not set(SECRETS) & set(environment)
    assert not [value for value in environment.values() if value.endswith("-value")]
    assert environment["GREETING"] == "hello"
    assert environment["PATH"] == os.environ["PATH"]


# --- under the engine's turn control -----------------------------------------------


async def test_an_mcp_call_is_one_tool_call_and_its_result_reaches_the_model(hub, run):
    outcome = await run(
        [
            Reply(calls=[Call("time__get_current_time", {"timezone": "Europe/Paris"})]),
            Reply(text="It is evening in Paris."),
        ],
        tools=registry(hub),
    )

    assert outcome.reason == "completed"
    assert outcome.result.state.total.tool_calls == 1
    (result,) = outcome.events.of_type("tool.result")
    assert result["ok"] is True and '"timezone": "Europe/Paris"' in result["content"]
    tool_message = outcome.model.calls[1].messages[-1]
    assert tool_message["role"] == "tool"
    assert json.loads(tool_message["content"])["timezone"] == "Europe/Paris"


async def test_progress_shows_live_on_the_tool_step(hub, run):
    outcome = await run(
        [
            Reply(
                calls=[
                    Call("everything__trigger-long-running-operation", {"duration": 1, "steps": 2})
                ]
            ),
            Reply(text="Done."),
        ],
        tools=registry(hub),
    )

    (call,) = outcome.events.of_type("tool.call")
    progress = outcome.events.of_type("tool.progress")
    assert [(event["progress"], event["total"]) for event in progress] == [(1, 2), (2, 2)]
    assert {event["id"] for event in progress} == {call["id"]}
    assert {event["name"] for event in progress} == {"everything__trigger-long-running-operation"}
    types = outcome.events.types()
    assert types.index("tool.call") < types.index("tool.progress") < types.index("tool.result")


async def test_stop_during_a_long_mcp_call_ends_the_run_within_a_second(hub, run, cancel_marker):
    cancel = CancelToken()
    before = cancellations(cancel_marker)

    async def stop_soon() -> float:
        await asyncio.sleep(0.5)
        cancel.cancel()
        return time.monotonic()

    stopper = asyncio.create_task(stop_soon())
    outcome = await run(
        [Reply(calls=[Call("testing__sleep", {"seconds": 30})]), Reply(text="unreachable")],
        tools=registry(hub),
        cancel=cancel,
    )

    assert time.monotonic() - await stopper < 1.0
    assert outcome.reason == "cancelled"
    (result,) = outcome.events.of_type("tool.result")
    assert result["ok"] is False
    await until(lambda: cancellations(cancel_marker) == before + 1)
    assert (await registry(hub).run("c1", "testing__echo", '{"text": "ok"}')).ok


async def test_the_time_limit_ends_a_run_stuck_in_an_mcp_call(hub, run, cancel_marker):
    before = cancellations(cancel_marker)
    started = time.monotonic()

    outcome = await run(
        [Reply(calls=[Call("testing__sleep", {"seconds": 30})])],
        tools=registry(hub),
        clock=Clock(rate=20),  # the run's 10 s limit passes in half a second
        timeout_seconds=10,
    )

    assert time.monotonic() - started < 10  # cut at the limit, not after the tool's 30 s
    assert outcome.reason == "timeout"
    await until(lambda: cancellations(cancel_marker) == before + 1)
    assert (await registry(hub).run("c1", "testing__echo", '{"text": "ok"}')).ok


async def test_a_pause_at_the_time_limit_cuts_the_call_and_continue_uses_the_server(
    hub, run, cancel_marker
):
    before = cancellations(cancel_marker)
    started = time.monotonic()

    outcome = await run(
        [
            Reply(calls=[Call("testing__sleep", {"seconds": 30})]),
            Reply(calls=[Call("testing__echo", {"text": "after the pause"})]),
            Reply(text="Done after all."),
        ],
        tools=registry(hub),
        clock=Clock(rate=20),
        timeout_seconds=10,
        limit_action="pause",
    )

    assert time.monotonic() - started < 10  # cut at the limit, not after the tool's 30 s
    assert outcome.result.status.value == "paused"
    assert outcome.events.types()[-1] == "run.paused"
    (cut,) = outcome.events.of_type("tool.result")
    assert cut["ok"] is False
    await until(lambda: cancellations(cancel_marker) == before + 1)

    events = EventCollector()
    resumed = await continue_run(outcome.result.state, outcome.deps, on_event=events)

    assert resumed.reason is not None and resumed.reason.value == "completed"
    (echoed,) = events.of_type("tool.result")
    assert (echoed["ok"], echoed["content"]) == (True, "after the pause")
