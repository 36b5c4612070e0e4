"""Work every worker does in the background, at each tick of its runs' sweeper (every
few seconds): each app registers its own job from its `AppConfig.ready` (the chat purges
deleted conversations, the alerts are evaluated, the dashboard counts its day tallies),
so the sweeper knows runs only. A job that fails is logged and tried at the next tick;
the others still run."""

from __future__ import annotations

import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)
_jobs: dict[str, Callable[[], object]] = {}


def register(what: str, job: Callable[[], object]) -> None:
    """Run `job` at every sweep; `what` says what it does ("evaluate the alerts"), for
    the log line of a failure. Registering the same `what` again replaces it."""
    _jobs[what] = job


def run_all() -> None:
    """Every registered job, in the order registered."""
    for what, job in list(_jobs.items()):
        try:
            job()
        except Exception:  # the database may be briefly away: the next tick tries again
            logger.exception("could not %s", what)
