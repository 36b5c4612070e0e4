"""What an MCP server can take from Oracle, through `manage.py ask` as an operator runs
it: a stdio server hunting for secrets (tests/mcp/hostile_server.py) finds none in any
process's environment and cannot open the database; a remote server's credentials
(in its address and its headers) appear in no log, at LOG_LEVEL=DEBUG.

`ask` is started here as a process of its own (`python manage.py ask`), not forked from
the suite's fork server: what a process's /proc/<pid>/environ shows is the environment
it was started with, and a forked one shows the fork server's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e_ask.conftest import AskRun
from tests.mcp.served import ROOT, everything_served

# Oracle's secrets, in the environment `ask` starts with.
SECRETS = {
    "SECRET_KEY": "sk-containment-5f2a9c1e7b",
    "ORACLE_API_KEY": "provider-key-8d3e61ab40",
    "GITHUB_TOKEN": "ghp-marker-c0ffee1234",
}


@pytest.fixture(scope="module")
def var_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A var folder of its own, holding a migrated SQLite database."""
    folder = tmp_path_factory.mktemp("contained-var")
    migrated = processes.manage("migrate", "--no-input", env=_env(folder))
    assert migrated.returncode == 0, migrated.stderr
    return folder


def _env(var_dir: Path, **more: str | None) -> dict[str, str]:
    return processes.base_env(
        ORACLE_VAR_DIR=str(var_dir),
        REDIS_URL=settings.REDIS_URL,  # the suite's: no embedded Redis of its own
        DATABASE_URL=None,  # SQLite in the var folder, also where the suite runs on PostgreSQL
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        **more,
    )


def ask_started(*args: str, var_dir: Path, servers: dict[str, Any], **env: str) -> AskRun:
    """`python manage.py ask ARGS --json` as its own process, with `servers` configured."""
    config = var_dir.parent / f"{var_dir.name}-mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    completed = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "ask",
            *args,
            "--json",
            "--approve-all",
            "--model",
            "openai/fake-model",
        ],
        cwd=ROOT,
        env=_env(var_dir, ORACLE_MCP_SERVERS=str(config), **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return AskRun(completed.returncode, completed.stdout, completed.stderr)


def hostile_server() -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": ["-m", "tests.mcp.hostile_server"],
        "env": {"PYTHONPATH": str(ROOT)},
    }


def hunt(ask_var: Path, server: FakeServer, sandbox: str) -> dict[str, Any]:
    """What the hostile server found in a run of `ask` under ORACLE_MCP_SANDBOX=`sandbox`."""
    database = str(ask_var / "oracle.sqlite3")
    call = {"name": "hostile__look_for_secrets", "arguments": {"database": database}}
    server.set_script([{"tool_calls": [call]}, {"text": ["Nothing to see."]}])

    run = ask_started(
        "Look around",
        var_dir=ask_var,
        servers={"hostile": hostile_server()},
        ORACLE_MCP_SANDBOX=sandbox,
        ORACLE_API_BASE=server.base_url,
        ORACLE_MODELS="openai/fake-model",
        **SECRETS,
    )

    assert run.finished["reason"] == "completed", run.stderr
    (result,) = run.of_type("tool.result")
    assert result["ok"] is True, (result["content"], run.stderr)
    return json.loads(result["content"]) | {"raw": result["content"]}


def test_a_hostile_stdio_server_finds_no_secret_and_cannot_open_the_database(var_dir, server):
    found = hunt(var_dir, server, "bwrap")

    for secret in SECRETS.values():
        assert secret not in found["raw"]
    assert found["secrets"] == {}
    assert found["processes"] <= 3  # its sandbox's own: no process of Oracle's is there
    assert found["database"].startswith("cannot open"), found["database"]
    assert "SQLite format 3" not in found["raw"]
    assert not [f for f in found["parent_files"] if "oracle.sqlite3" in f]


def test_without_the_sandbox_the_same_server_finds_them_all(var_dir, server):
    """The hunt above is a real one: with ORACLE_MCP_SANDBOX=none it finds every secret
    in `ask`'s environment and reads the database, through /proc and by its path."""
    found = hunt(var_dir, server, "none")

    for name, secret in SECRETS.items():
        assert secret in found["secrets"][name]
    assert found["database"].startswith("opened: "), found["database"]
    assert [f for f in found["parent_files"] if "oracle.sqlite3" in f and "SQLite format 3" in f]


def test_a_remote_servers_credentials_appear_in_no_log(var_dir, server):
    password, token, bearer, key = "pw-9a1f33e0", "tok-41c7d2b8", "bearer-5e0b7a66", "key-77d2c9a1"
    server.set_script(
        [
            {"tool_calls": [{"name": "remote__echo", "arguments": {"message": "over http"}}]},
            {"text": ["It echoed."]},
        ]
    )
    with everything_served("streamableHttp") as address:
        url = address.replace("http://", f"http://oracle:{password}@") + f"?token={token}"
        run = ask_started(
            "Echo over HTTP",
            var_dir=var_dir,
            servers={
                "remote": {
                    "url": url,
                    "headers": {"Authorization": f"Bearer {bearer}", "X-Api-Key": key},
                }
            },
            LOG_LEVEL="DEBUG",
            ORACLE_API_BASE=server.base_url,
            ORACLE_MODELS="openai/fake-model",
        )

    assert run.finished["reason"] == "completed", run.stderr
    (result,) = run.of_type("tool.result")
    assert result["content"] == "Echo: over http"
    # The address is logged (the SDK's debug line), without what is secret in it.
    assert "endpoint: http://***@127.0.0.1:" in run.stderr
    logs = [run.stdout, run.stderr]
    logs += [path.read_text() for path in (var_dir / "log").rglob("*") if path.is_file()]
    for secret in (password, token, bearer, key):
        assert not [log for log in logs if secret in log], secret
