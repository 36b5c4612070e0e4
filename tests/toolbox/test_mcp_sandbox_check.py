"""`manage.py check` says when stdio MCP servers cannot be contained, and why: a warning
when they would start uncontained (ORACLE_MCP_SANDBOX=auto), an error when containment
is required and cannot be had, or the setting means nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests import processes
from tests.mcp.served import mcp_time_server

NO_BWRAP = "/nonexistent"  # a PATH where bubblewrap cannot be found: as if not installed


@pytest.fixture
def servers_file(tmp_path: Path) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"time": mcp_time_server()}}))
    return str(path)


def check(servers_file: str, **env: str) -> str:
    done = processes.manage("check", env=processes.base_env(ORACLE_MCP_SERVERS=servers_file, **env))
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"PATH": NO_BWRAP},
            "(oracle.W021) The stdio MCP servers (time) run uncontained: bubblewrap is not "
            "installed (apt-get install bubblewrap).",
        ),
        (
            {"PATH": NO_BWRAP, "ORACLE_MCP_SANDBOX": "bwrap"},
            "(oracle.E022) The stdio MCP servers (time) cannot start: ORACLE_MCP_SANDBOX is "
            "bwrap and bubblewrap is not installed (apt-get install bubblewrap).",
        ),
        (
            {"ORACLE_MCP_SANDBOX": "on"},
            "(oracle.E021) ORACLE_MCP_SANDBOX must be auto, bwrap or none, not 'on'",
        ),
    ],
)
def test_check_says_why_stdio_servers_are_not_contained(servers_file, env, said):
    assert said in check(servers_file, **env)


def test_check_is_quiet_where_they_are_contained_or_the_operator_said_none(servers_file):
    assert os.path.exists("/usr/bin/bwrap")  # make test installs it
    for output in (check(servers_file), check(servers_file, ORACLE_MCP_SANDBOX="none")):
        assert "oracle.W021" not in output and "oracle.E02" not in output
