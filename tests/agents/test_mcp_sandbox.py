"""Stdio servers in their sandbox (bubblewrap), through `McpHub` and real servers: what
a hostile server can reach with and without it, and each way a server cannot start
there, in words. `tests/e2e_ask/test_ask_mcp_containment.py` does the same through
`manage.py ask`, Oracle's secrets in its environment."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, closing
from pathlib import Path

import pytest

from agents.mcp import NO_SANDBOX, McpHub, Sandbox
from agents.mcp_config import parse_mcp_config
from agents.mcp_sandbox import sandbox_for
from tests.mcp.served import ROOT, mcp_testing_server

HOSTILE = {
    "command": sys.executable,
    "args": ["-m", "tests.mcp.hostile_server"],
    "env": {"PYTHONPATH": str(ROOT)},
}


@pytest.fixture
def private(tmp_path: Path) -> Iterator[Path]:
    """A folder of Oracle's with a database in it, held open as Django holds it, and
    one more database beside it."""
    folder = tmp_path / "var"
    folder.mkdir()
    for database in (folder / "oracle.sqlite3", tmp_path / "elsewhere.sqlite3"):
        with closing(sqlite3.connect(database)) as connection:
            connection.execute("CREATE TABLE chat_message (text)")
    with closing(sqlite3.connect(folder / "oracle.sqlite3")) as held:
        held.execute("SELECT count(*) FROM chat_message").fetchall()
        yield folder


def contained(private: Path, mode: str = "bwrap") -> Sandbox:
    sandbox, problem = sandbox_for(
        mode,
        hidden_folders=(str(private),),
        hidden_files=(str(private.parent / "elsewhere.sqlite3"),),
    )
    assert problem == "", problem
    return sandbox


@asynccontextmanager
async def started(sandbox: Sandbox, **servers: dict[str, object]) -> AsyncIterator[McpHub]:
    hub = McpHub(parse_mcp_config({"mcpServers": servers}).servers, sandbox=sandbox)
    await hub.start()
    try:
        yield hub
    finally:
        await hub.close()


async def hunt(hub: McpHub, database: Path) -> dict[str, object]:
    result = await hub.servers["hostile"].call("look_for_secrets", {"database": str(database)})
    return json.loads(result.content[0].text)


async def test_a_hostile_server_sees_no_process_of_oracles_nor_its_files(private: Path) -> None:
    async with started(contained(private), hostile=HOSTILE) as hub:
        in_var = await hunt(hub, private / "oracle.sqlite3")
        elsewhere = await hunt(hub, private.parent / "elsewhere.sqlite3")

    assert in_var["processes"] <= 3  # its sandbox's own
    assert in_var["secrets"] == {}
    for found in (in_var, elsewhere):
        assert str(found["database"]).startswith("cannot open"), found["database"]
    assert not [f for f in in_var["parent_files"] if "oracle.sqlite3" in f]  # type: ignore[attr-defined]


async def test_without_a_sandbox_the_same_server_reads_them(private: Path) -> None:
    async with started(NO_SANDBOX, hostile=HOSTILE) as hub:
        in_var = await hunt(hub, private / "oracle.sqlite3")
        elsewhere = await hunt(hub, private.parent / "elsewhere.sqlite3")

    assert in_var["processes"] > 3
    assert in_var["database"] == elsewhere["database"] == "opened: 1 tables (chat_message)"
    held = [f for f in in_var["parent_files"] if "oracle.sqlite3" in f]  # type: ignore[attr-defined]
    assert held and "SQLite format 3" in held[0]


async def test_a_server_works_in_its_sandbox_from_its_own_folder(
    private: Path, tmp_path: Path
) -> None:
    async with started(contained(private), testing=mcp_testing_server(cwd=str(tmp_path))) as hub:
        echoed = await hub.servers["testing"].call("echo", {"text": "inside"})

    assert echoed.content[0].text == "inside"


@pytest.mark.parametrize(
    ("server", "error"),
    [
        (
            {"command": "/nonexistent/mcp-server"},
            "the command was not found (/nonexistent/mcp-server)",
        ),
        (
            mcp_testing_server("--exit-at-once"),
            "it exited before answering, in its sandbox (bubblewrap); its error output, "
            "bubblewrap's included, is in Oracle's log",
        ),
        ("in_private", "is among Oracle's private files, which its sandbox hides"),
    ],
)
async def test_a_server_that_cannot_start_in_its_sandbox_says_why(
    private: Path, server: dict[str, object] | str, error: str
) -> None:
    if server == "in_private":
        server = mcp_testing_server(cwd=str(private))
    async with started(contained(private), broken=server) as hub:  # type: ignore[arg-type]
        (status,) = hub.status()

    assert status["state"] == "failed"
    assert error in status["error"]


async def test_a_required_sandbox_that_cannot_be_had_starts_no_stdio_server(
    private: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no bubblewrap on this machine's PATH
    required, problem = sandbox_for("bwrap", hidden_folders=(str(private),))
    fallback, fallback_problem = sandbox_for("auto", hidden_folders=(str(private),))
    monkeypatch.undo()

    assert problem == fallback_problem == "bubblewrap is not installed (apt-get install bubblewrap)"
    assert fallback == NO_SANDBOX
    async with started(required, testing=mcp_testing_server()) as hub:
        (status,) = hub.status()
    assert status["state"] == "failed"
    assert status["error"] == (
        "ORACLE_MCP_SANDBOX is bwrap and bubblewrap is not installed (apt-get install bubblewrap)"
    )


def test_an_unknown_mode_is_refused_in_words() -> None:
    refused = "ORACLE_MCP_SANDBOX must be auto, bwrap or none, not 'on'"
    with pytest.raises(ValueError, match=refused):
        sandbox_for("on")
