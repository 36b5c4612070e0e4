"""The MCP servers file (`ORACLE_MCP_SERVERS`): the common `mcpServers` shape, checked key
by key. A bad entry gives one clear message naming its server and leaves the others usable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.mcp_config import (
    DEFAULT_TIMEOUT_SECONDS,
    McpServerConfig,
    load_mcp_config,
    parse_mcp_config,
)
from agents.mcp_consent import consent, fingerprint, grant_of

GOOD = {"command": "uvx", "args": ["mcp-server-time"]}


def servers(**entries: Any) -> dict[str, Any]:
    return {"mcpServers": entries}


def test_it_reads_the_file_claude_desktop_and_cursor_write(tmp_path: Path):
    path = tmp_path / "mcp.json"
    document = servers(
        time={"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        remote={"url": "https://tools.example.com/mcp", "headers": {"Authorization": "Bearer x"}},
        legacy={"url": "http://127.0.0.1:3001/sse", "transport": "sse"},
    )
    path.write_text(json.dumps(document))

    config = load_mcp_config(str(path))

    assert config.problems == ()
    time, remote, legacy = config.servers
    assert (time.name, time.transport, time.command, time.args) == (
        "time",
        "stdio",
        "uvx",
        ("mcp-server-time",),
    )
    assert time.env == {"TZ": "UTC"}
    assert (remote.transport, remote.url) == ("http", "https://tools.example.com/mcp")
    assert remote.headers == {"Authorization": "Bearer x"}
    assert legacy.transport == "sse"
    # Oracle's own keys have their defaults: consent as the tools' annotations say
    # (the MCP specification's "ask the user"), a minute per call, enabled, no call cap.
    assert (time.approval, time.approve_tools) == ("auto", frozenset())
    assert time.max_calls_per_run == {}
    assert (time.timeout_seconds, time.enabled) == (DEFAULT_TIMEOUT_SECONDS, True)


def test_oracles_own_keys_set_approval_the_ceiling_and_whether_it_is_used():
    config = parse_mcp_config(
        servers(
            git={**GOOD, "approval": "always", "timeout_seconds": 5, "enabled": False},
            files={**GOOD, "approve_tools": ["write_file"], "timeout_seconds": 2.5},
        )
    )

    git, files = config.servers
    assert config.problems == ()
    read_only = {"readOnlyHint": True}
    assert asks(git, "status", read_only) and git.timeout_seconds == 5.0 and not git.enabled
    assert asks(files, "write_file", read_only) and not asks(files, "read_file", read_only)
    assert files.timeout_seconds == 2.5 and files.enabled


def test_claude_desktops_disabled_key_switches_a_server_off():
    config = parse_mcp_config(
        servers(off={**GOOD, "disabled": True}, on={**GOOD, "disabled": False})
    )

    assert config.problems == ()
    assert [(server.name, server.enabled) for server in config.servers] == [
        ("off", False),
        ("on", True),
    ]


def test_keys_other_clients_write_are_accepted_and_ignored():
    entry = {**GOOD, "type": "stdio", "description": "Clock", "alwaysAllow": [], "autoApprove": []}

    config = parse_mcp_config(servers(time=entry))

    assert config.problems == () and config.servers[0].name == "time"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({**GOOD, "comand": "typo"}, "unknown key(s): comand"),
        ({"args": []}, 'give either "command" (a server Oracle starts) or "url" (one it reaches)'),
        ({**GOOD, "url": "http://x/mcp"}, 'give either "command"'),
        ({**GOOD, "approval": "sometimes"}, 'approval must be "auto", "never" or "always"'),
        ({**GOOD, "max_calls_per_run": 0}, "max_calls_per_run must be a whole number from 1"),
        ({**GOOD, "max_calls_per_run": {"echo": "2"}}, "max_calls_per_run must be a whole"),
        ({**GOOD, "max_calls_per_run": True}, "max_calls_per_run must be a whole number"),
        ({**GOOD, "timeout_seconds": 0}, "timeout_seconds must be a number of seconds above 0"),
        ({**GOOD, "timeout_seconds": "60"}, "timeout_seconds must be a number"),
        ({**GOOD, "timeout_seconds": True}, "timeout_seconds must be a number"),
        ({**GOOD, "timeout_seconds": 10**9}, "and at most 86400"),
        ({**GOOD, "enabled": "yes"}, "enabled must be true or false, not 'yes'"),
        ({"command": ""}, "command must be a non-empty string"),
        ({"command": "x", "args": "--flag"}, "args must be a list of strings"),
        ({"command": "x", "env": {"N": 1}}, "env must be an object of strings"),
        ({"command": "x", "headers": {}}, "headers belong(s) to a server reached by url"),
        ({"url": "http://x/mcp", "cwd": "/"}, "cwd belong(s) to a server started by command"),
        ({"url": "file:///etc/passwd"}, "url must be an http:// or https:// address"),
        ({"url": "http://x/mcp", "transport": "websocket"}, 'transport must be "http"'),
        ({**GOOD, "approve_tools": "all"}, "approve_tools must be a list of strings"),
        ("uvx mcp-server-time", "expected an object"),
    ],
)
def test_a_bad_entry_names_its_server_and_leaves_the_others_usable(entry, message):
    config = parse_mcp_config(servers(broken=entry, time=GOOD))

    (problem,) = config.problems
    assert problem.startswith("MCP server 'broken': ")
    assert message in problem
    assert [server.name for server in config.servers] == ["time"]


@pytest.mark.parametrize("name", ["has space", "a__b", "x" * 33, "", "ünï"])
def test_a_server_name_that_cannot_prefix_a_tool_name_is_refused(name):
    config = parse_mcp_config(servers(**{name: GOOD, "time": GOOD}))

    (problem,) = config.problems
    assert problem.startswith(f"MCP server {name!r}: a server's name is 1 to 32 letters")
    assert "its tools are named <server>__<tool>" in problem
    assert [server.name for server in config.servers] == ["time"]


def test_every_bad_server_gets_its_own_message():
    config = parse_mcp_config(
        servers(one={"command": "x", "bogus": 1}, two={"approval": "x"}, three=GOOD)
    )

    assert [problem.split(":")[0] for problem in config.problems] == [
        "MCP server 'one'",
        "MCP server 'two'",
    ]
    assert [server.name for server in config.servers] == ["three"]


def test_a_document_without_mcp_servers_is_one_problem_and_no_servers():
    assert parse_mcp_config({"servers": {}}, source="mcp.json").problems == (
        'mcp.json: expected an object with an "mcpServers" object',
    )
    assert parse_mcp_config([1, 2]).servers == ()


def test_an_unknown_top_level_key_is_named_and_the_servers_still_load():
    config = parse_mcp_config({"mcpServers": {"time": GOOD}, "inputs": []}, source="mcp.json")

    assert config.problems == ("mcp.json: unknown key 'inputs' (only \"mcpServers\")",)
    assert [server.name for server in config.servers] == ["time"]


def test_a_file_that_is_not_json_is_named_with_the_parsers_reason(tmp_path: Path):
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"time": {"command": "uvx",}}}')

    config = load_mcp_config(str(path))

    (problem,) = config.problems
    assert problem.startswith(f"ORACLE_MCP_SERVERS: {path} is not JSON: ")
    assert "line 1" in problem
    assert config.servers == ()


def test_a_missing_file_is_named(tmp_path: Path):
    path = tmp_path / "nowhere.json"

    config = load_mcp_config(str(path))

    (problem,) = config.problems
    assert problem.startswith(f"ORACLE_MCP_SERVERS: cannot read {path}: ")
    assert "No such file" in problem
    assert config.servers == ()


def test_no_file_means_no_servers_and_no_problems():
    config = load_mcp_config("")

    assert (config.servers, config.problems) == ((), ())


def test_where_says_what_the_server_is_for_logs_without_its_secrets():
    secret = "https://oracle:hunter2@tools.example.com:8443/mcp?token=s3cret#x"
    time, remote, plain = parse_mcp_config(
        servers(
            time=GOOD,
            remote={"url": secret},
            plain={"url": "https://tools.example.com/mcp"},
        )
    ).servers

    assert time.where == "uvx mcp-server-time"
    assert remote.where == "https://tools.example.com:8443/mcp"
    assert plain.where == "https://tools.example.com/mcp"
    assert remote.without_secrets(f"401 for url '{secret}'") == (
        "401 for url 'https://tools.example.com:8443/mcp'"
    )


def asks(config: McpServerConfig, tool: str, hints: dict[str, bool]) -> bool:
    return consent(config.approval, config.approve_tools, tool, hints).asks


@pytest.mark.parametrize(
    ("approval", "hints", "expected"),
    [
        ("auto", {}, (True, "its server does not mark it read-only")),
        ("auto", {"readOnlyHint": False}, (True, "its server does not mark it read-only")),
        ("auto", {"readOnlyHint": True}, (False, "its server marks it read-only")),
        # Destructive asks even where the server also (wrongly) says read-only.
        ("auto", {"readOnlyHint": True, "destructiveHint": True},
         (True, "its server marks it destructive")),
        ("never", {"destructiveHint": True}, (False, 'its server\'s "approval" is "never"')),
        ("always", {"readOnlyHint": True}, (True, 'its server\'s "approval" is "always"')),
    ],
)  # fmt: skip
def test_auto_asks_before_every_tool_not_marked_read_only(approval, hints, expected):
    decided = consent(approval, frozenset(), "t", hints)

    assert (decided.asks, decided.why) == expected


def test_approve_tools_asks_under_every_approval():
    for approval in ("auto", "never"):
        decided = consent(approval, frozenset({"t"}), "t", {"readOnlyHint": True})
        assert (decided.asks, decided.why) == (True, "its server's approve_tools names it")


def test_max_calls_per_run_is_one_number_for_the_server_or_numbers_by_tool():
    config = parse_mcp_config(
        servers(a={**GOOD, "max_calls_per_run": 2},
                b={**GOOD, "max_calls_per_run": {"echo": 1, "*": 5}})
    )  # fmt: skip

    a, b = config.servers
    assert config.problems == ()
    assert (a.max_calls_per_run, b.max_calls_per_run) == ({"*": 2}, {"echo": 1, "*": 5})


def test_a_grant_is_bound_to_what_the_tool_says_it_does():
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}

    assert fingerprint("Delete a file.", schema) == fingerprint("Delete a file.", dict(schema))
    assert fingerprint("Delete a file.", schema) != fingerprint("Read a file.", schema)
    assert fingerprint("Delete a file.", schema) != fingerprint(
        "Delete a file.", {"type": "object"}
    )
    # A stored grant is read back only when it has its three parts.
    assert grant_of(["h", "danger", "ab12"]) == ("h", "danger", "ab12")
    assert [grant_of(bad) for bad in ("h___danger", ["h", "danger"], ["h", "", "x"], None)] == [
        None
    ] * 4
