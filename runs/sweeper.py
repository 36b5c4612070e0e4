"""Every worker looks, every few seconds, for runs whose worker died (no heartbeat),
and marks them `interrupted` so their owners see it and can Resume them. Pages and
the API only read: until a worker's sweeper marks it, they show such a run as lost
(`Run.is_lost`).

It also takes runs that stayed `queued` with no task behind them (posted while the
broker was away, or lost with its data): the claim makes sure each runs once. And it
ends the runs that waited on their user past the site's expiry (`runs.expiry`).
On the worker's shutdown, the runs it hosts get a grace period to finish. At each tick
it also runs the jobs other apps registered (`ops.periodic`: purging deleted
conversations, the operator's alerts, the staff dashboard's day tallies)."""

from __future__ import annotations

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections, connections

logger = logging.getLogger(__name__)
_stop = threading.Event()


def _sweep_forever() -> None:
    from ops import periodic
    from runs.expiry import runs_expire_pauses
    from runs.host import run_host
    from runs.interruptions import runs_mark_interrupted
    from runs.queue import runs_waiting_for_a_worker

    interval = max(1.0, settings.ORACLE_RUN_HEARTBEAT_TIMEOUT / 3)
    try:
        while not _stop.wait(interval):
            close_old_connections()
            try:
                for run in runs_mark_interrupted():
                    logger.warning("run %s lost its worker: marked interrupted", run.pk)
                runs_expire_pauses()
                for run_id in runs_waiting_for_a_worker():
                    if not run_host().try_submit(run_id):
                        break
                    logger.warning("run %s was queued with no task: taken by the sweeper", run_id)
            except Exception:  # the database may be briefly away; try again next time
                logger.exception("could not look for interrupted runs")
            try:
                periodic.run_all()  # the other apps' background jobs (ops.periodic)
            finally:
                close_old_connections()  # a pooled connection goes back
    finally:
        connections.close_all()


def _on_worker_ready(**_: object) -> None:
    _stop.clear()
    threading.Thread(target=_sweep_forever, name="oracle-run-sweeper", daemon=True).start()
    from runs.host import run_host

    if settings.ORACLE_MCP_SERVERS:
        run_host().start_tools()
    run_host().warm_up()


def _on_worker_shutdown(**_: object) -> None:
    from runs.host import shutdown_host

    _stop.set()
    shutdown_host(settings.ORACLE_WORKER_SHUTDOWN_GRACE)


def connect_worker_signals() -> None:
    worker_ready.connect(_on_worker_ready, weak=False, dispatch_uid="oracle-run-sweeper")
    worker_shutdown.connect(_on_worker_shutdown, weak=False, dispatch_uid="oracle-sweeper-stop")
