"""`/healthz`: what an operator's load balancer and monitoring read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from django.test import Client, override_settings

from tests import processes

pytestmark = pytest.mark.django_db


def test_it_reports_database_redis_and_a_live_worker(client: Client, celery_worker: str) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    assert body["redis"] == "ok"
    assert body["workers"] >= 1


def test_it_needs_no_login(client: Client) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"


def test_it_counts_a_worker_until_it_stops(client: Client, tmp_path: Path) -> None:
    before = client.get("/healthz").json()["workers"]
    worker = processes.start_worker(tmp_path / "worker.log", name="healthz-worker")
    try:
        processes.wait_for(lambda: client.get("/healthz").json()["workers"] == before + 1, 60)
    finally:
        processes.stop(worker)

    assert client.get("/healthz").json()["workers"] == before


@override_settings(REDIS_URL=f"redis://127.0.0.1:{processes.free_port()}/0")
def test_it_answers_503_naming_redis_when_redis_is_down(client: Client) -> None:
    response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert body["failing"] == ["redis"]
    assert body["redis"].startswith("error")
    assert body["database"] == "ok"
    assert body["workers"] == 0


def test_it_answers_503_naming_the_database_when_it_is_down(tmp_path: Path) -> None:
    port = processes.free_port()
    dead_database = f"postgres://nobody@127.0.0.1:{processes.free_port()}/nothing"
    env = processes.base_env(DATABASE_URL=dead_database)
    server = processes.start(
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "oracle.asgi:application",
        ],
        env,
        tmp_path / "daphne.log",
    )
    try:
        status, body = processes.wait_for(
            lambda: processes.get_json(f"http://127.0.0.1:{port}/healthz"), timeout=30
        )
    finally:
        processes.stop(server)

    assert status == 503
    assert body["failing"] == ["database"]
    assert body["database"].startswith("error")
    assert body["redis"] == "ok"


def test_it_accepts_only_get(client: Client) -> None:
    assert client.post("/healthz").status_code == 405
