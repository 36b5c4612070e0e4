"""`manage.py ask` with an MCP server that lists 3,000 tools and one of a 2 MB schema,
our testing server over stdio: its first tools only are offered, what was left out is
said on stderr, and a plain run answers; with the cap raised past them, the run ends
before its first call naming the tools' share of the token budget."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.mcp.served import mcp_testing_server

# A 2 MB schema: with the 3,000 tools the listing stays under the 4 MiB an answer may
# have (ORACLE_TOOL_RESULT_MAX_BYTES).
MANY = mcp_testing_server("--many-tools", "3000", "--big-schema", "2000000")


@pytest.fixture(scope="module")
def servers_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("ask-mcp-caps") / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"many": MANY}}))
    return str(path)


def test_list_tools_offers_the_first_100_and_says_what_it_left_out(ask, servers_file):
    run = ask("--list-tools", ORACLE_MCP_SERVERS=servers_file)

    assert run.returncode == 0, run.stderr
    names = [line.split("\t")[0] for line in run.stdout.splitlines()]
    offered = [name for name in names if name.startswith("many__")]
    assert len(offered) == 100
    assert "many__echo" in offered and "many__big" not in offered
    assert re.search(
        r"MCP server 'many': 3,0\d\d tools listed: the first 100 are offered "
        r"\(ORACLE_MCP_MAX_TOOLS_PER_SERVER\)",
        run.stderr,
    )
    assert re.search(
        r"MCP server 'many': tool 'big' left out: its schema is 2,000,\d{3} bytes, over "
        r"ORACLE_MCP_MAX_SCHEMA_BYTES \(65,536\)",
        run.stderr,
    )


def test_a_plain_run_answers_with_the_servers_first_tools(ask, server, servers_file):
    server.set_script([{"text": ["Hello."]}])

    run = ask("Hi", "--json", server=server, ORACLE_MCP_SERVERS=servers_file)

    assert run.finished["reason"] == "completed", run.stderr
    sent = [tool["function"]["name"] for tool in server.requests[-1]["tools"]]
    assert len([name for name in sent if name.startswith("many__")]) == 100


def test_past_the_budget_the_stop_names_the_tools_share(ask, server, tmp_path: Path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"many": MANY}}))
    server.set_script([{"text": ["Never sent."]}])

    run = ask(
        "Hi", "--json", "--token-budget", "20000", server=server,
        ORACLE_MCP_SERVERS=str(path), ORACLE_MCP_MAX_TOOLS_PER_SERVER="3000",
    )  # fmt: skip

    assert run.finished["reason"] == "token_budget"
    assert server.requests == []
    (notice,) = run.of_type("system.notice")
    assert re.search(
        r"The next model call would pass the token budget \(0 of 20,000 tokens used\): "
        r"the 3,\d{3} tools' descriptions take [\d,]+ tokens of your 20,000",
        notice["text"],
    ), notice["text"]
    assert "Switch off the MCP servers you do not need on the Tools page" in notice["text"]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ORACLE_MCP_MAX_TOOLS_PER_SERVER", "0", "must be at least 1"),
        ("ORACLE_MCP_MAX_TOOLS_PER_SERVER", "many", "must be a whole number"),
        ("ORACLE_MCP_MAX_SCHEMA_BYTES", "100", "must be at least 1,024"),
    ],
)
def test_a_bad_cap_is_named_and_nothing_runs(ask, servers_file, name, value, message):
    run = ask("--list-tools", ORACLE_MCP_SERVERS=servers_file, **{name: value})

    assert run.returncode != 0
    assert f"{name} {message}" in run.stderr
    assert run.stdout == ""
