"""Run `manage.py ask --json` as a real process against the fake provider (forked from
the suite's fork server, `tests/forkserver.py`, which has LiteLLM imported already)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agents.testing.fake_server import FakeServer
from tests import forkserver

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class AskRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines()]

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event["type"] == event_type]

    @property
    def finished(self) -> dict[str, Any]:
        (event,) = self.of_type("run.finished")
        return event


def ask_env(server: FakeServer | None = None, **env_vars: str) -> dict[str, str]:
    """The environment `ask` runs with (its database is the one DATABASE_URL names, or
    the SQLite file of var/test)."""
    return {
        **os.environ,
        "ORACLE_VAR_DIR": str(ROOT / "var" / "test"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "ORACLE_MODEL": "",
        "ORACLE_API_BASE": server.base_url if server else "",
        "ORACLE_API_KEY": "test-key" if server else "",
        "ORACLE_MODELS": "openai/fake-model" if server else "",
        **env_vars,
    }


def run_ask(*args: str, server: FakeServer | None = None, **env_vars: str) -> AskRun:
    """`manage.py ask ARGS`; with a fake `server`, `openai/fake-model` is offered
    (ORACLE_MODELS) and chosen unless ARGS name a --model. Keyword arguments are
    more environment variables."""
    env = ask_env(server, **env_vars)
    model = ["--model", "openai/fake-model"] if server and "--model" not in args else []
    completed = forkserver.run_manage("ask", *args, *model, env=env, timeout=90)
    return AskRun(completed.returncode, completed.stdout, completed.stderr)


@pytest.fixture(scope="session", autouse=True)
def no_learnt_windows() -> None:
    """No context window learnt by an earlier session's `ask` (kept per model in the
    database `ask` uses, which on PostgreSQL outlives the suite): the fake models' windows
    are what each test makes them. Tests that teach one use a model name of their own."""
    forget = (
        "from django.db import DatabaseError\n"
        "from settings_ui.models import ModelWindow\n"
        "try:\n"
        "    ModelWindow.objects.filter(model__startswith='openai/fake-').delete()\n"
        "except DatabaseError:\n"
        "    pass  # not migrated yet: nothing learnt\n"
    )
    forkserver.run_manage("shell", "-c", forget, env=ask_env(), timeout=90)


@pytest.fixture
def server():
    with FakeServer() as fake:
        yield fake


@pytest.fixture
def ask():
    return run_ask
