"""`manage.py ask` with MCP servers: the tools it lists, approval without a UI, choosing
servers, and a configuration with a bad entry and a server that will not start.

The servers: `mcp-server-time` from PyPI and our testing server (its `echo` asks for
approval), both over stdio, one entry with an unknown key and one whose command does
not exist.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.mcp.served import mcp_testing_server, mcp_time_server


@pytest.fixture(scope="module")
def servers_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("ask-mcp") / "mcp.json"
    servers = {
        "time": mcp_time_server(),
        "testing": mcp_testing_server(approve_tools=["echo"]),
        "bad": {"command": "x", "colour": "red"},
        "gone": {"command": "/nonexistent/mcp-server"},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def listed(stdout: str) -> dict[str, list[str]]:
    rows = [line.split("\t") for line in stdout.splitlines()]
    return {row[0]: row[1:] for row in rows}


def echo_call(text: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "testing__echo", "arguments": {"text": text}}]}


def test_list_tools_shows_builtin_and_mcp_tools_and_names_the_broken_servers(ask, servers_file):
    run = ask("--list-tools", ORACLE_MCP_SERVERS=servers_file)

    assert run.returncode == 0, run.stderr
    tools = listed(run.stdout)
    assert tools["calculator"][:2] == ["-", "-"]
    assert tools["time__get_current_time"][:2] == ["time", "-"]
    assert tools["testing__echo"][:2] == ["testing", "asks first"]
    assert not [name for name in tools if name.startswith(("bad__", "gone__"))]
    assert "MCP server 'bad': unknown key(s): colour" in run.stderr
    assert "MCP server 'gone'" in run.stderr and "the command was not found" in run.stderr


def test_no_mcp_and_a_chosen_server_narrow_the_list(ask, servers_file):
    without = ask("--list-tools", "--no-mcp", ORACLE_MCP_SERVERS=servers_file)
    only_time = ask("--list-tools", "--mcp-servers", "time", ORACLE_MCP_SERVERS=servers_file)

    assert without.returncode == only_time.returncode == 0
    assert not [name for name in listed(without.stdout) if "__" in name]
    assert {row[0] for row in listed(only_time.stdout).values() if row[0] != "-"} == {"time"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--list-tools", "--mcp-servers", "nope"], "no enabled MCP server called nope"),
        (["Hi", "--mcp-servers", "bad"], "no enabled MCP server called bad"),
        (["--list-tools", "--mcp-servers", " , "], "no enabled MCP server called (none)"),
        (["Hello", "--list-tools"], "give a question, or --list-tools (not both)"),
    ],
)
def test_a_bad_choice_of_servers_is_a_clear_error_with_status_2(ask, servers_file, args, message):
    run = ask(*args, ORACLE_MCP_SERVERS=servers_file)

    assert run.returncode == 2
    assert message in run.stderr
    assert run.stdout == ""


def test_without_a_ui_a_call_that_needs_approval_is_declined(ask, server, servers_file):
    server.set_script([echo_call("deploy"), {"text": ["I did not deploy."]}])

    run = ask("Deploy", "--json", server=server, ORACLE_MCP_SERVERS=servers_file)

    assert run.finished["reason"] == "completed"
    (asked,) = run.of_type("tool.approval_requested")
    assert (asked["name"], asked["server"], asked["arguments"]) == (
        "testing__echo",
        "testing",
        {"text": "deploy"},
    )
    (given,) = run.of_type("tool.approval_given")
    assert given["approved"] is False
    (result,) = run.of_type("tool.result")
    assert result["ok"] is False and "The user declined this call." in result["content"]
    assert "The user declined this call." in json.dumps(server.requests[-1]["messages"])


def test_approve_all_runs_the_call(ask, server, servers_file):
    server.set_script([echo_call("deploy"), {"text": ["Deployed."]}])

    run = ask("Deploy", "--json", "--approve-all", server=server, ORACLE_MCP_SERVERS=servers_file)

    assert run.finished["reason"] == "completed"
    assert run.finished["tool_calls"] == 1
    assert not run.of_type("tool.approval_requested")
    (result,) = run.of_type("tool.result")
    assert (result["ok"], result["content"]) == (True, "deploy")


def test_a_real_servers_tool_answers_in_a_run(ask, server, servers_file):
    call = {"name": "time__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}
    server.set_script([{"tool_calls": [call]}, {"text": ["Late in Tokyo."]}])

    run = ask("Time in Tokyo?", "--json", server=server, ORACLE_MCP_SERVERS=servers_file)

    assert run.finished["reason"] == "completed"
    (result,) = run.of_type("tool.result")
    assert result["ok"] is True and "Asia/Tokyo" in result["content"]


def test_a_configuration_file_that_is_not_json_leaves_ask_working(ask, server, tmp_path: Path):
    broken = tmp_path / "mcp.json"
    broken.write_text("{not json")
    server.set_script([{"text": ["Fine."]}])

    run = ask("Hi", "--json", server=server, ORACLE_MCP_SERVERS=str(broken))

    assert run.finished["reason"] == "completed"
    assert f"ORACLE_MCP_SERVERS: {broken} is not JSON" in run.stderr


def test_max_calls_per_run_refuses_the_third_call_and_the_run_answers(ask, server, tmp_path):
    path = tmp_path / "mcp.json"
    capped = {**mcp_time_server(), "max_calls_per_run": 2}
    path.write_text(json.dumps({"mcpServers": {"time": capped}}))
    now = {"name": "time__get_current_time", "arguments": {"timezone": "UTC"}}
    server.set_script(
        [{"tool_calls": [now]}, {"tool_calls": [now]}, {"tool_calls": [now]}, {"text": ["Noon."]}]
    )

    run = ask("What time is it, three times?", "--json", server=server,
              ORACLE_MCP_SERVERS=str(path))  # fmt: skip

    assert (run.finished["reason"], run.finished["tool_calls"]) == ("completed", 3)
    first, second, third = run.of_type("tool.result")
    assert first["ok"] and second["ok"] and "UTC" in second["content"]
    assert third["ok"] is False
    assert (
        "2 time(s), the most its operator allows in one run (max_calls_per_run)"
        in (third["content"])
    )
    # Counted in the log as a refusal at the operator's bound.
    (refused,) = run.of_type("tool.refused")
    assert (refused["id"], refused["reason"], refused["value"], refused["limit"]) == (
        third["id"], "max_calls_per_run", 2, 2,
    )  # fmt: skip
    # The model was told, and answered.
    assert "max_calls_per_run" in json.dumps(server.requests[-1]["messages"])
    assert "Noon." in json.dumps(run.of_type("assistant.message")[-1])
