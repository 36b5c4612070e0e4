"""The Tools page, `GET /api/tools/`, each user's switch per MCP server, `/healthz` and
`manage.py check` with MCP servers configured: what a worker found of real servers
(our testing server and `mcp-server-time`, started here for the module), a server
that will not start, one switched off in the file, and files that are broken."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings

from agents.mcp import McpHub, McpTool
from agents.mcp_config import load_mcp_config
from runs.tools import builtin_names
from tests.mcp.served import free_port, mcp_testing_server, mcp_time_server
from toolbox.hub import configured, record_status
from toolbox.models import McpServerStatus, ToolPreferences
from toolbox.selectors import servers_enabled_for

SERVERS = {
    "time": mcp_time_server(),
    "testing": mcp_testing_server(approve_tools=["echo"]),
    "gone": {"command": "/nonexistent/mcp-server"},
    # Nothing listens there; its address holds a password and a token.
    "remote": {"url": f"http://oracle:hunter2@127.0.0.1:{free_port()}/mcp?token=s3cret"},
    "resting": {"command": sys.executable, "enabled": False},
}


@pytest.fixture(scope="module")
def servers_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("toolbox") / "mcp.json"
    path.write_text(json.dumps({"mcpServers": SERVERS}))
    return str(path)


@pytest.fixture(scope="module")
def found(servers_file: str) -> tuple[list[dict[str, Any]], list[McpTool]]:
    """What a worker finds of the file's servers: their states and tools."""

    async def start() -> tuple[list[dict[str, Any]], list[McpTool]]:
        hub = McpHub(load_mcp_config(servers_file).servers, reserved=frozenset(builtin_names()))
        await hub.start()
        try:
            return hub.status(), hub.tools()
        finally:
            await hub.close()

    return asyncio.run(start())


@pytest.fixture
def mcp(servers_file: str, found: Any, db: None) -> Iterator[None]:
    """The file configured, and a worker's findings recorded."""
    with override_settings(ORACLE_MCP_SERVERS=servers_file):
        configured.cache_clear()
        record_status(*found)
        yield
    configured.cache_clear()


@pytest.fixture
def alice_client(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client


def api_tools(client: Client) -> dict[str, dict[str, Any]]:
    response = client.get("/api/tools/")
    assert response.status_code == 200
    return {tool["name"]: tool for tool in response.json()["tools"]}


def test_the_api_lists_builtin_and_mcp_tools_in_one_list(mcp: None, alice_client: Client):
    tools = api_tools(alice_client)

    assert tools["calculator"] == {
        "name": "calculator",
        "description": tools["calculator"]["description"],
        "server": "",
        "approval": False,
    }
    # Every built-in a run may use: the documents and delegating to a helper too.
    assert {"search_documents", "read_document", "delegate"} <= set(tools)
    assert tools["delegate"]["server"] == ""
    assert tools["time__get_current_time"]["server"] == "time"
    assert tools["time__get_current_time"]["description"] == (
        "Get current time in a specific timezone"
    )
    assert (tools["testing__echo"]["approval"], tools["testing__pid"]["approval"]) == (True, False)
    assert not [name for name in tools if name.startswith(("gone__", "resting__"))]


def test_the_page_shows_each_servers_state_its_reason_and_its_tools(
    mcp: None, alice_client: Client
):
    page = alice_client.get("/tools/").content.decode()

    assert 'id="server-time" data-state="ready"' in page
    assert 'id="server-gone" data-state="failed"' in page
    assert "the command was not found (/nonexistent/mcp-server)" in page
    assert 'id="server-resting" data-state="disabled"' in page
    assert '<code>testing__echo</code> <span class="badge badge-ask"' in page
    assert "Asks first: its server&#x27;s approve_tools names it" in page
    assert "Acts without asking: its server marks it read-only" in page
    assert "<code>calculator</code>" in page
    # Where a server is: the program's name, not its path or arguments; an address
    # without its credentials or query, in its error too.
    assert sys.executable not in page
    assert 'id="server-remote" data-state="failed"' in page
    assert "nothing answers at http://127.0.0.1:" in page
    assert "hunter2" not in page and "s3cret" not in page


def test_switching_a_server_off_takes_its_tools_from_my_runs_only(
    mcp: None, alice_client: Client, alice: User, bob: User
):
    response = alice_client.post("/tools/time/switch/", {"enabled": "0"})

    assert response.status_code == 200
    assert 'aria-pressed="false"' in response.content.decode()
    assert not [name for name in api_tools(alice_client) if name.startswith("time__")]
    # A failed server stays in: its runs try it again (after its back-off).
    assert servers_enabled_for(user=alice) == ["testing", "gone", "remote"]
    assert servers_enabled_for(user=bob) == ["time", "testing", "gone", "remote"]

    alice_client.post("/tools/time/switch/", {"enabled": "1"})
    assert "time__get_current_time" in api_tools(alice_client)
    assert servers_enabled_for(user=alice) == ["time", "testing", "gone", "remote"]


@pytest.mark.parametrize(
    ("path", "data", "status"),
    [
        ("/tools/time/switch/", {"enabled": "maybe"}, 400),
        ("/tools/time/switch/", {}, 400),
        ("/tools/nothing/switch/", {"enabled": "0"}, 404),
    ],
)
def test_a_bad_switch_is_refused_and_changes_nothing(
    mcp: None, alice_client: Client, path: str, data: dict[str, str], status: int
):
    response = alice_client.post(path, data)

    assert response.status_code == status
    assert not ToolPreferences.objects.exists()


def test_health_shows_each_servers_state(mcp: None, client: Client):
    body = client.get("/healthz").json()

    assert body["mcp_servers"] == {
        "time": "ready",
        "testing": "ready",
        "gone": "failed",
        "remote": "failed",
        "resting": "disabled",
    }
    assert "nonexistent" not in json.dumps(body)  # reasons are for the Tools page and the log


def test_before_a_worker_reached_them_servers_are_not_started_and_offer_no_tools(
    servers_file: str, alice_client: Client
):
    with override_settings(ORACLE_MCP_SERVERS=servers_file):
        configured.cache_clear()
        try:
            tools = api_tools(alice_client)
            page = alice_client.get("/tools/").content.decode()
            health = alice_client.get("/healthz").json()
        finally:
            configured.cache_clear()

    assert not [name for name in tools if "__" in name]
    assert 'id="server-time" data-state="not started"' in page
    assert health["mcp_servers"]["time"] == "not started"
    assert not McpServerStatus.objects.exists()


BROKEN_FILES = {
    "not JSON": ("{not json", "is not JSON"),
    "no mcpServers": ('{"servers": {}}', 'expected an object with an "mcpServers" object'),
    "an unknown key": (
        json.dumps({"mcpServers": {"time": {**SERVERS["time"], "colour": "red"}}}),
        "MCP server 'time': unknown key(s): colour",
    ),
    "a bad approval": (
        json.dumps({"mcpServers": {"time": {**SERVERS["time"], "approval": "sometimes"}}}),
        'MCP server \'time\': approval must be "auto", "never" or "always", not \'sometimes\'',
    ),
}


@pytest.mark.parametrize("broken", BROKEN_FILES, ids=list(BROKEN_FILES))
def test_a_broken_file_is_named_by_check_and_the_pages_still_work(
    broken: str, tmp_path: Path, alice_client: Client
):
    text, message = BROKEN_FILES[broken]
    path = tmp_path / "mcp.json"
    path.write_text(text)
    out = StringIO()
    with override_settings(ORACLE_MCP_SERVERS=str(path)):
        configured.cache_clear()
        try:
            call_command("check", stdout=out, stderr=out)
            responses = [alice_client.get(url) for url in ("/tools/", "/api/tools/", "/healthz")]
        finally:
            configured.cache_clear()

    assert "oracle.W020" in out.getvalue() and message in out.getvalue()
    assert [response.status_code for response in responses] == [200, 200, 200]
    assert "calculator" in responses[1].content.decode()
