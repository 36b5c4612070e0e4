from __future__ import annotations

from celery import shared_task

# Imported when the worker starts, not inside the first run: LiteLLM takes seconds to load.
import agents.litellm_model  # noqa: F401
from chat import runner


@shared_task(name="chat.execute_run", ignore_result=True)
def execute_run_task(run_id: str) -> None:
    """Drive one queued run (start, continue, resume or stop) in this worker."""
    runner.execute_run(run_id)
