from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from tests import processes


@pytest.fixture
def alice(db: None) -> User:
    return User.objects.create_user("alice", password="correct horse battery")


@pytest.fixture
def bob(db: None) -> User:
    return User.objects.create_user("bob", password="correct horse battery")


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


def _node(name: str) -> str:
    import socket

    return f"{name}@{socket.gethostname()}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the embedded Redis if this test session's settings started it."""
    from django.conf import settings

    if getattr(settings, "EMBEDDED_REDIS_STARTED_HERE", False):
        from ops.embedded_redis import embedded_redis_for

        embedded_redis_for(settings.VAR_DIR).stop()
