from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.mcp.served import everything_served, mcp_testing_server, mcp_time_server
from tests.redis_dbs import MCP_STACK_REDIS_DB
from tests.stack import OracleStack

pytest_plugins = ["tests.no_skips"]


@pytest.fixture(scope="session", autouse=True)
def _close_connections(django_db_setup: None) -> Iterator[None]:
    """Close the test process's other database connections before the test database is
    dropped: async tests read through asgiref's one sync thread, which keeps its own
    connection, and PostgreSQL keeps a pool."""
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    SyncToAsync.single_thread_executor.submit(connections.close_all).result()
    for connection in connections.all(initialized_only=True):
        if connection.vendor == "postgresql":
            connection.close_pool()


GENEROUS = "100000/m"


@pytest.fixture(autouse=True)
def _test_settings(settings: Any) -> None:
    """The suite logs in and signs up far more often than anyone would: the rate limits'
    own tests set theirs. And it hashes passwords the quick way (Django's advice for
    tests: the default hasher takes a quarter of a second a password here)."""
    settings.ORACLE_RATE_LIMITS = {name: GENEROUS for name in settings.ORACLE_RATE_LIMITS}
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _migrated_rows(request: pytest.FixtureRequest) -> None:
    """The rows the migrations seed (the subagent types' limits) are there in every test
    that reads the database, as after `migrate`. A test on the real database
    (`transactional_db`) empties every table when it ends, and a test that came after it
    found none: in a file's order that was rare, across xdist's workers it is not."""
    if "transactional_db" in request.fixturenames:
        request.getfixturevalue("transactional_db")
    elif "db" in request.fixturenames:
        request.getfixturevalue("db")
    elif request.node.get_closest_marker("django_db") is None:
        return
    from django.apps import apps

    from settings_ui.models import AgentTypeLimits

    if not AgentTypeLimits.objects.exists():
        importlib.import_module("settings_ui.migrations.0002_subagent_types").seed(apps, None)


@pytest.fixture
def alice(db: None) -> User:
    return User.objects.create_user("alice", password="correct horse battery")


@pytest.fixture
def bob(db: None) -> User:
    return User.objects.create_user("bob", password="correct horse battery")


@pytest.fixture(scope="session")
def mcp_stack(
    tmp_path_factory: pytest.TempPathFactory, fake_provider: FakeServer
) -> Iterator[OracleStack]:
    """The whole product with MCP servers: `mcp-server-time` from PyPI and our testing
    server over stdio (hostile: it also lists a 200-character name and a broken schema;
    its `echo` asks for approval) and a second one whose `mark` collides with its
    `_mark` (both `testing___mark` to a model), server-everything from npm over
    Streamable HTTP, and one whose command does not exist. The MCP end-to-end and
    browser tests share it."""
    folder = tmp_path_factory.mktemp("mcp-stack")
    config = folder / "mcp.json"
    with everything_served("streamableHttp") as everything:
        servers = {
            "time": mcp_time_server(),
            "testing": mcp_testing_server(
                "--hostile",
                "--marking-tool",
                "_mark",
                approve_tools=["echo"],
                env={"ORACLE_TEST_MARK_FILE": str(folder / "testing.marks")},
            ),
            # Its `mark` and testing's `_mark` are both `testing___mark` to a model.
            "testing_": mcp_testing_server(
                "--marking-tool",
                "mark",
                env={"ORACLE_TEST_MARK_FILE": str(folder / "testing_.marks")},
            ),
            "everything": {"url": everything},
            "broken": {"command": "/nonexistent/mcp-server"},
        }
        config.write_text(json.dumps({"mcpServers": servers}))
        oracle = OracleStack(
            folder,
            redis_db=MCP_STACK_REDIS_DB,
            ORACLE_MCP_SERVERS=str(config),
            **processes.model_env(fake_provider),
        )
        oracle.start()
        try:
            yield oracle
        finally:
            oracle.stop()


@pytest.fixture(scope="session")
def celery_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Celery worker process on the suite's Redis; yields its node name."""
    log = Path(tmp_path_factory.mktemp("worker")) / "worker.log"
    name = f"test-worker-{processes.free_port()}"
    worker = processes.start_worker(log, name=name)
    try:
        from oracle.celery import app

        processes.wait_for(
            lambda: app.control.ping(destination=[_node(name)], timeout=0.5), timeout=60
        )
        yield _node(name)
    finally:
        processes.stop(worker)


@pytest.fixture(scope="session")
def fake_provider() -> Iterator[FakeServer]:
    """The fake OpenAI-compatible provider; each test sets its script."""
    with FakeServer([]) as server:
        yield server


@pytest.fixture(scope="session")
def stack(
    tmp_path_factory: pytest.TempPathFactory, fake_provider: FakeServer
) -> Iterator[OracleStack]:
    """The whole product (daphne, a worker, Redis, a database) talking to the fake provider."""
    oracle = OracleStack(
        tmp_path_factory.mktemp("stack"),
        # fake-window: a model whose window the context tests teach it (by a refusal).
        ORACLE_MODELS="openai/fake-model,openai/fake-large,openai/fake-window",
        ORACLE_RUN_HEARTBEAT_TIMEOUT="3",
        **processes.model_env(fake_provider),
    )
    oracle.start()
    try:
        yield oracle
    finally:
        oracle.stop()


# Stops what a test left working on the shared stack: a run still going (resumed by a
# worker after the test looked, say) would answer the next test's model calls.
_STOP_ACTIVE_RUNS = """
from chat.models import Run
from runs.control import run_cancel
from runs.queue import ACTIVE
for run in Run.objects.filter(status__in=ACTIVE):
    run_cancel(run=run)
print(Run.objects.filter(status__in=ACTIVE).count())
"""


@pytest.fixture(autouse=True)
def _no_run_outlives_its_test(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "stack" not in request.fixturenames:
        return
    env = request.getfixturevalue("stack").env

    def none_active() -> bool:
        stopped = processes.shell(_STOP_ACTIVE_RUNS, env=env)
        assert stopped.returncode == 0, stopped.stderr
        return stopped.stdout.strip() == "0"

    processes.wait_for(none_active, 30, interval=0.3)


def _node(name: str) -> str:
    import socket

    return f"{name}@{socket.gethostname()}"


# Loaded by a test module as it is collected, these would cost every xdist worker their
# import, whether or not it runs a test that needs them (LiteLLM: 3 to 5 s of CPU).
NOT_AT_COLLECTION = ("litellm",)
_LOADED_AT_COLLECTION = pytest.StashKey[list[str]]()


def pytest_collection_finish(session: pytest.Session) -> None:
    import sys

    session.config.stash[_LOADED_AT_COLLECTION] = [
        name for name in NOT_AT_COLLECTION if name in sys.modules
    ]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Every test fails while collection imports what it must not (a UsageError raised in
    a worker's collection reaches xdist's controller as an internal error, unexplained)."""
    loaded = item.config.stash.get(_LOADED_AT_COLLECTION, [])
    if loaded:
        pytest.fail(
            f"Collecting the tests imported {', '.join(loaded)}: import it in the tests "
            "(or fixtures) that use it, not at the top of their module.",
            pytrace=False,
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the migrated databases stacks were copied from; stop the embedded Redis if
    this test session's settings started it."""
    from django.conf import settings

    processes.drop_migrated_templates()
    if getattr(settings, "EMBEDDED_REDIS_STARTED_HERE", False):
        from ops.embedded_redis import embedded_redis_for

        embedded_redis_for(settings.VAR_DIR).stop()
