"""How a run reaches a worker: queued by name through the broker once its transaction
commits, or, when the broker was away, swept up from the database later."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from celery.result import AsyncResult
from django.db import transaction
from django.utils import timezone

from chat.models import Run, RunStatus
from oracle.celery import app as celery_app

logger = logging.getLogger(__name__)
# How long a queued run may wait for its task before a worker's sweeper takes it.
QUEUED_GRACE_SECONDS = 5.0
ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.PAUSED)


def enqueue(run: Run) -> None:
    """Queue the run for a worker once the transaction that queued it has committed.
    By name: the web process need not import the engine (nor LiteLLM) to do it.

    With the broker away the run stays `queued` and the request still succeeds: a
    worker's sweeper picks up runs queued (`queued_at`, set by the caller) longer than
    `QUEUED_GRACE_SECONDS` ago."""
    run_id = str(run.pk)
    transaction.on_commit(lambda: _send_run(run_id))


class _Sent(AsyncResult):  # type: ignore[type-arg]
    """What `send_task` hands back for a run's task: nothing to wait on. Celery's own
    `AsyncResult` looks up the result backend, which Celery keeps per thread, and
    Django answers each request in a thread of its own: every post built a new
    backend, about a twentieth of the post's CPU (bench/README.md)."""

    def __init__(self, task_id: str, **_: Any) -> None:  # no super(): no backend
        self.id = task_id


def _send_run(run_id: str) -> None:
    try:
        # No result is kept: asking for one would make the send wait on the result
        # store, which retries for 20 s while Redis is away.
        celery_app.send_task(
            "chat.execute_run", args=[run_id], retry=False, ignore_result=True,
            result_cls=_Sent,
        )  # fmt: skip
    except Exception as error:  # the broker is away: the sweeper takes the run later
        logger.warning("run %s stays queued until a worker sweeps it: %r", run_id, error)


def runs_waiting_for_a_worker() -> list[str]:
    """Runs queued longer than `QUEUED_GRACE_SECONDS` ago: their task never reached a
    worker (or was lost with the broker's data). Oldest first."""
    cutoff = timezone.now() - timedelta(seconds=QUEUED_GRACE_SECONDS)
    waiting = Run.objects.filter(status=RunStatus.QUEUED, queued_at__lt=cutoff)
    return [str(pk) for pk in waiting.order_by("queued_at").values_list("pk", flat=True)[:100]]
