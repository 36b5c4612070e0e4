"""Caps on what one MCP server may offer, and a token budget that names the tools' share.

A server listing thousands of tools (one with a schema of megabytes) once left every
run ending at `token_budget` before its first call, saying only "0 of 50,000 tokens
used". Now its first tools only are offered, each of a bounded size, the Tools page
says what was left out, and a stop the tools' schemas cause names them in figures.
The server is our testing server over stdio (`--many-tools`, `--big-schema`).
"""

from __future__ import annotations

import json
import re
import time
from types import SimpleNamespace
from typing import Any

from agents.mcp import McpHub
from agents.mcp_config import parse_mcp_config
from agents.mcp_listing import ListingCaps, list_tools, usable_tools
from agents.testing.scripted import Reply
from agents.tools import Tool, ToolRegistry
from tests.mcp.served import mcp_testing_server

# 2 MB: with the 3,000 tools the listing stays under the 4 MiB an answer may have
# (ORACLE_TOOL_RESULT_MAX_BYTES, another cap).
BIG = 2_000_000


def servers(*args: str) -> Any:
    config = parse_mcp_config({"mcpServers": {"many": mcp_testing_server(*args)}})
    assert not config.problems
    return config.servers


async def test_a_server_of_3000_tools_offers_its_first_100_and_says_what_it_left_out():
    hub = McpHub(
        servers("--many-tools", "3000", "--big-schema", str(BIG)),
        caps=ListingCaps(max_tools=100, max_schema_bytes=64 * 1024),
    )
    started = time.monotonic()
    try:
        await hub.start()
        (status,) = hub.status()
        offered = hub.tools()
    finally:
        await hub.close()

    assert status["state"] == "ready", status["error"]
    assert len(offered) == 100
    # Its own tools come first and are offered; the enormous one is not.
    names = [tool.tool for tool in offered]
    assert "echo" in names and "big" not in names
    problems = status["problems"]
    # 3,000 extra, the big one and its own (about ten; others' tests add more).
    assert re.fullmatch(
        r"3,0\d\d tools listed: the first 100 are offered \(ORACLE_MCP_MAX_TOOLS_PER_SERVER\)",
        problems[0],
    )
    (big,) = [problem for problem in problems if "'big'" in problem]
    assert big.startswith("tool 'big' left out: its schema is 2,000,")
    assert big.endswith("bytes, over ORACLE_MCP_MAX_SCHEMA_BYTES (65,536)")
    print(f"started and listed {problems[0][:5]} tools in {time.monotonic() - started:.1f} s")


async def test_without_caps_in_the_way_every_tool_is_offered():
    hub = McpHub(servers("--many-tools", "20"), caps=ListingCaps(max_tools=1_000))
    try:
        await hub.start()
        (status,) = hub.status()
        offered = hub.tools()
    finally:
        await hub.close()

    assert len(offered) == status["tools"] > 20  # its own tools and the 20 extra
    assert "extra_0019" in [tool.tool for tool in offered]
    assert status["problems"] == []


class PagedServer:
    """A client of a server that lists 40 tools a page, over 25 pages."""

    def __init__(self) -> None:
        self.pages_read = 0

    async def list_tools(self, cursor: str | None = None) -> Any:
        page = int(cursor or 0)
        self.pages_read += 1
        tools = [
            SimpleNamespace(
                name=f"t{page}_{n}",
                description="A tool.",
                input_schema={"type": "object", "properties": {}},
            )
            for n in range(40)
        ]
        return SimpleNamespace(tools=tools, next_cursor=str(page + 1) if page < 24 else None)


async def test_listing_stops_reading_pages_past_the_cap():
    client = PagedServer()
    caps = ListingCaps(max_tools=100)

    listing = await list_tools(client, caps)
    usable, problems = usable_tools(listing, caps)

    assert client.pages_read == 3  # 120 tools read: past the cap, no page more
    assert len(usable) == 100
    assert problems == [
        "over 120 tools listed (Oracle read no further): the first 100 are offered "
        "(ORACLE_MCP_MAX_TOOLS_PER_SERVER)"
    ]


def big_tools(count: int, size: int) -> list[Tool]:
    async def call(**_: Any) -> str:
        return "never called"

    return [
        Tool.from_schema(
            name=f"many__tool_{n}",
            description=f"Looks things up in collection {n}. " + "Detail. " * (size // 8),
            parameters={"type": "object", "properties": {"q": {"type": "string"}}},
            function=call,
            server="many",
        )
        for n in range(count)
    ]


async def test_a_run_the_tools_schemas_keep_from_starting_names_them_and_what_helps(run):
    outcome = await run(
        [Reply(text="Never sent.")], tools=ToolRegistry(big_tools(17, 600)), token_budget=2_000
    )

    assert outcome.reason == "token_budget"
    assert outcome.model.calls == []
    tools_tokens = outcome.model.count_tokens(
        [{"role": "system", "content": json.dumps(outcome.deps.tools.schemas)}]
    )
    assert tools_tokens > 2_000
    share = f"the 17 tools' descriptions take {tools_tokens:,} tokens of your 2,000"
    assert outcome.result.final_text.startswith(
        "Stopped: the next model call would pass the token budget (0 of 2,000 tokens used): "
        + share
    )
    (notice,) = [n for n in outcome.notices() if n.get("reason") == "token_budget"]
    assert share in notice["text"]
    assert notice["text"].endswith(
        "Switch off the MCP servers you do not need on the Tools page, or raise your token "
        "budget in Settings; then press Continue."
    )


async def test_a_run_its_own_conversation_stops_does_not_blame_the_tools(run):
    outcome = await run(
        [Reply(text="Never sent.")],
        question="word " * 4_000,  # about 5,000 tokens: the question alone passes 2,000
        tools=ToolRegistry(big_tools(2, 100)),
        token_budget=2_000,
    )

    assert outcome.reason == "token_budget"
    assert "descriptions take" not in outcome.result.final_text
    (notice,) = [n for n in outcome.notices() if n.get("reason") == "token_budget"]
    assert notice["text"].endswith("Press Continue to give the Oracle another round.")


async def test_one_tool_is_named_in_the_singular(run):
    tools = ToolRegistry(big_tools(1, 12_000))
    outcome = await run([Reply(text="Never sent.")], tools=tools, token_budget=2_000)

    assert "the tool's description takes" in outcome.result.final_text
