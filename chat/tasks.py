from __future__ import annotations

from celery import shared_task

from chat import runner


@shared_task(name="chat.execute_run")
def execute_run_task(run_id: str) -> None:
    """Drive one queued run (start, continue, resume or stop) in this worker."""
    runner.execute_run(run_id)
