from __future__ import annotations

from celery import shared_task

# Imported when the worker starts, not inside the first run: LiteLLM takes seconds to
# load, and the engine's loop (through runs.runner) a while too.
import agents.litellm_model  # noqa: F401
import runs.runner  # noqa: F401
from runs.host import run_host


@shared_task(name="chat.execute_run", ignore_result=True)
def execute_run_task(run_id: str) -> None:
    """Drive one queued run (start, continue, resume or stop) in this worker."""
    run_host().submit(run_id)  # the host claims it; this thread returns at once
