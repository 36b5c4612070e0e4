"""Waits on the user end: a run paused for an approval, or at a limit whose action is
to ask, is ended by a worker's sweeper once it has waited `ORACLE_PAUSE_EXPIRY_SECONDS`
(0: it waits for ever). It ends `pause_expired`, keeping everything it produced; the
calls that waited for approval show as expired, never run, and Continue still works."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Max, Q
from django.utils import timezone

from agents.events import EventType
from chat.models import Run, RunStatus
from runs.control import requeue
from runs.errors import RunConflict

logger = logging.getLogger(__name__)


def runs_expire_pauses(now: datetime | None = None) -> list[Run]:
    """Queue every run that has waited on the user past the site's expiry to end
    `pause_expired` (a worker ends it, as a Stop would); returns those queued. A run
    answered, continued or stopped meanwhile is left to that answer."""
    seconds = settings.ORACLE_PAUSE_EXPIRY_SECONDS
    if not seconds:
        return []
    cutoff = (now or timezone.now()) - timedelta(seconds=seconds)
    expired = (
        Run.objects.filter(status=RunStatus.PAUSED)
        .annotate(paused_at=Max("events__created_at", filter=Q(events__type=EventType.RUN_PAUSED)))
        .filter(paused_at__lt=cutoff)
    )
    queued = []
    for run in expired[:100]:
        try:
            queued.append(requeue(run, "expire", lambda r: r.is_paused))
        except RunConflict:  # the user answered as it expired: the answer holds
            continue
        logger.info("run %s waited on its user for over %s s: it ends", run.pk, seconds)
    return queued
