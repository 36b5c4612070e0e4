"""The settings page says, beside the token budget, how many tokens the user's tools take
of every model call, counted as the engine counts them: the built-in tools and those a
worker recorded of the MCP servers the user has not switched off."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from agents.mcp import McpHub, McpTool
from agents.mcp_config import load_mcp_config
from agents.offline_model import OfflineModel
from runs.tools import run_tools
from settings_ui.models import AgentSettings
from settings_ui.selectors import subagent_types
from tests.mcp.served import mcp_testing_server
from toolbox.hub import configured, record_status
from toolbox.models import ToolPreferences


def recorded_tools(count: int) -> list[McpTool]:
    """Tools a worker found of the server "many", each with a schema of about 2 KB."""
    fields = {f"field_{n}": {"type": "string", "description": "A field. " * 20} for n in range(8)}
    return [
        McpTool(
            name=f"many__lookup_{n}",
            server="many",
            tool=f"lookup_{n}",
            description=f"Looks things up in collection {n}.",
            input_schema={"type": "object", "properties": fields},
            needs_approval=False,
        )
        for n in range(count)
    ]


@pytest.fixture
def many(tmp_path: Path, db: None) -> Iterator[list[McpTool]]:
    """The server "many" configured, and 17 of its tools recorded by a worker."""
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"many": mcp_testing_server()}}))
    tools = recorded_tools(17)
    with override_settings(ORACLE_MCP_SERVERS=str(path), ORACLE_MODEL="", ORACLE_MODELS=[]):
        configured.cache_clear()
        status = [{"name": "many", "transport": "stdio", "state": "ready", "error": "",
                   "tools": 17, "problems": []}]  # fmt: skip
        record_status(status, tools)
        yield tools
    configured.cache_clear()


def engine_estimate(user: User, mcp_tools: list[McpTool]) -> tuple[int, int]:
    """The tools a run of `user` is offered, and their tokens as the engine estimates
    them before a call (the offline model's count of the request's tool schemas)."""
    registry = run_tools(user_id=user.pk, agent_types=subagent_types())
    hub = McpHub(load_mcp_config(configured_path()).servers)
    for tool in mcp_tools:
        registry.add(hub.tool(tool))
    message = {"role": "system", "content": json.dumps(registry.schemas)}
    return len(registry.schemas), OfflineModel().count_tokens([message])


def configured_path() -> str:
    from django.conf import settings

    return settings.ORACLE_MCP_SERVERS


def share(page: str) -> str:
    found = re.search(r'id="tools-share">([^<]*)<', page)
    assert found, "the page shows no tools' share"
    return html.unescape(found.group(1))


def test_the_page_shows_the_tools_share_of_every_call(
    many: list[McpTool], alice: User, alice_client: Client
):
    count, tokens = engine_estimate(alice, many)

    text = share(alice_client.get("/settings/").content.decode())

    assert count > 17
    assert text == (
        f"Your {count} tools' descriptions take {tokens:,} tokens of every model call, "
        "counted in the token budget."
    )


def test_past_the_budget_the_page_says_runs_cannot_start_and_what_helps(
    many: list[McpTool], alice: User, alice_client: Client
):
    AgentSettings.objects.filter(user=alice).update(token_budget=1_000)
    _, tokens = engine_estimate(alice, many)
    assert tokens > 1_000

    text = share(alice_client.get("/settings/").content.decode())

    assert "That is more than your budget: runs end before their first call." in text
    assert "Switch off the MCP servers you do not need on the Tools page" in text


def test_a_server_switched_off_on_the_tools_page_leaves_the_share(
    many: list[McpTool], alice: User, alice_client: Client
):
    ToolPreferences.objects.create(user=alice, disabled_servers=["many"])
    count, tokens = engine_estimate(alice, [])

    text = share(alice_client.get("/settings/").content.decode())

    assert text.startswith(f"Your {count} tools' descriptions take {tokens:,} tokens")
