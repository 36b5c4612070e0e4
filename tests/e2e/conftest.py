from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents.testing.fake_server import FakeServer
from tests.stack import OracleStack


@pytest.fixture(scope="session")
def fake_provider() -> Iterator[FakeServer]:
    with FakeServer([]) as server:
        yield server


@pytest.fixture(scope="session")
def stack(
    tmp_path_factory: pytest.TempPathFactory, fake_provider: FakeServer
) -> Iterator[OracleStack]:
    oracle = OracleStack(
        tmp_path_factory.mktemp("stack"),
        ORACLE_MODEL="openai/fake-model",
        ORACLE_API_BASE=fake_provider.base_url,
        ORACLE_API_KEY="fake-key",
        ORACLE_RUN_HEARTBEAT_TIMEOUT="3",
    )
    oracle.start()
    try:
        yield oracle
    finally:
        oracle.stop()
