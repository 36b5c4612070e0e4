"""A task goes through the real broker to a real worker process and back."""

from __future__ import annotations

from ops.tasks import echo


def test_a_task_round_trips_through_the_broker_and_a_worker(celery_worker: str) -> None:
    result = echo.delay("hello, worker")

    answer = result.get(timeout=30)

    assert answer["echo"] == "hello, worker"
    assert result.status == "SUCCESS"
