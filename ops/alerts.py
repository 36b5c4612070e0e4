"""Alerts on the last full hour of runs (SPEC section 9), evaluated by every worker's
sweeper at most once a minute (`alerts_evaluate_if_due`).

Each rule looks at the runs that *finished* in the window (a clock hour, e.g.
14:00-15:00 UTC) and fires when:

- spend: they cost more than ORACLE_ALERT_COST_PER_HOUR (USD, default 10) in all;
- terminations: more than ORACLE_ALERT_TERMINATIONS_PER_HOUR (default 5) of them ended at
  a limit (`LIMIT_REASONS`: max_iterations, token_budget, timeout, cost_budget,
  no_progress, tool_errors, tool_budget, tool_budget_violation, turn_budget_exhausted);
- near_limit: at least NEAR_LIMIT_MIN_RUNS (10) of them finished, and more than
  ORACLE_ALERT_NEAR_LIMIT_SHARE (default 0.5) of those got a soft warning: a System
  message of severity `warning` that is not the run's ending (an ending's carries its
  reason). That is the notice at the user's warning percentage of a limit (70% by
  default, 80% for tokens) or, under the `warn` action, the one past the limit.

The window evaluated is the last clock hour that ended at least `GRACE` ago, so that a
run finishing at 14:59:59 is written before 14:00-15:00 is looked at; an hour is thus
looked at for an hour, always to the same result. An alert is a row (one per kind and
window: the database refuses a second, so workers evaluating the same hour at once fire
it once), an error on the `oracle.alerts` logger and a mail to the site's ADMINS, the
last two from the worker whose row it is.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.mail import mail_admins
from django.db.models import Count, Q, QuerySet, Sum
from django.template.loader import render_to_string
from django.utils import timezone

from agents.state import LIMIT_REASONS
from chat.models import Role, Run, RunStatus
from ops.models import Alert, AlertKind

logger = logging.getLogger("oracle.alerts")

HOUR = timedelta(hours=1)
GRACE = timedelta(minutes=1)
EVALUATE_EVERY_SECONDS = 60.0
NEAR_LIMIT_MIN_RUNS = 10


@dataclass(frozen=True)
class Window:
    """One clock hour, [start, end) in UTC."""

    start: datetime
    end: datetime

    @classmethod
    def last_before(cls, now: datetime) -> Window:
        """The last full clock hour that ended at least `GRACE` before `now`."""
        end = (now - GRACE).astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        return cls(end - HOUR, end)

    def runs(self) -> QuerySet[Run]:
        """The runs that finished in the window."""
        return Run.objects.filter(
            status=RunStatus.FINISHED, finished_at__gte=self.start, finished_at__lt=self.end
        )

    def __str__(self) -> str:
        return f"from {self.start:%H:%M} to {self.end:%H:%M} UTC on {self.start:%Y-%m-%d}"


@dataclass(frozen=True)
class Breach:
    """A rule's threshold passed in a window: what becomes an `Alert`."""

    kind: AlertKind
    value: float
    threshold: float
    title: str
    detail: str
    setting: str


Rule = Callable[[Window], Breach | None]


def spend(window: Window) -> Breach | None:
    threshold = float(settings.ORACLE_ALERT_COST_PER_HOUR)
    runs = window.runs()
    total = float(runs.aggregate(total=Sum("cost_usd"))["total"] or 0.0)
    if total <= threshold:
        return None
    spenders = (
        runs.values("conversation__owner__username")
        .annotate(total=Sum("cost_usd"))
        .order_by("-total")[:3]
    )
    top = ", ".join(
        f"{row['conversation__owner__username']} {_usd(row['total'])}" for row in spenders
    )
    return Breach(
        AlertKind.SPEND,
        total,
        threshold,
        f"Spend of {_usd(total)} {window} (threshold {_usd(threshold)} an hour)",
        f"The runs that finished {window} cost {_usd(total)} in all, more than "
        f"{_usd(threshold)}. The most: {top}.",
        "ORACLE_ALERT_COST_PER_HOUR",
    )


def terminations(window: Window) -> Breach | None:
    threshold = int(settings.ORACLE_ALERT_TERMINATIONS_PER_HOUR)
    ended = window.runs().filter(reason__in=LIMIT_REASONS)
    count = ended.count()
    if count <= threshold:
        return None
    reasons = ended.values("reason").annotate(runs=Count("id")).order_by("-runs", "reason")
    by_reason = ", ".join(f"{row['reason']} {row['runs']}" for row in reasons)
    return Breach(
        AlertKind.TERMINATIONS,
        count,
        threshold,
        f"{count} runs ended at a limit {window} (threshold {threshold} an hour)",
        f"{count} runs that finished {window} were ended by a limit, more than {threshold}. "
        f"By reason: {by_reason}.",
        "ORACLE_ALERT_TERMINATIONS_PER_HOUR",
    )


def near_limit(window: Window) -> Breach | None:
    threshold = float(settings.ORACLE_ALERT_NEAR_LIMIT_SHARE)
    runs = window.runs()
    finished = runs.count()
    if finished < NEAR_LIMIT_MIN_RUNS:
        return None
    soft_warning = Q(
        messages__role=Role.SYSTEM,
        messages__metadata__severity="warning",
    ) & (Q(messages__metadata__reason=None) | Q(messages__metadata__reason__isnull=True))
    warned = runs.filter(soft_warning).distinct().count()
    share = warned / finished
    if share <= threshold:
        return None
    return Breach(
        AlertKind.NEAR_LIMIT,
        share,
        threshold,
        f"{warned} of {finished} runs neared a limit {window} (threshold {threshold:.0%})",
        f"Of the {finished} runs that finished {window}, {warned} ({share:.0%}) got a soft "
        f"warning (their users' warning percentage of a limit), more than {threshold:.0%}. "
        "Users' limits may be too tight for what they ask, or the Oracle goes in circles.",
        "ORACLE_ALERT_NEAR_LIMIT_SHARE",
    )


RULES: tuple[Rule, ...] = (spend, terminations, near_limit)


def alerts_evaluate(*, now: datetime | None = None) -> list[Alert]:
    """Evaluate every rule on the last full hour before `now`; return the alerts this
    call fired (none for a rule whose alert for that hour exists already)."""
    window = Window.last_before(now or timezone.now())
    fired = set(Alert.objects.filter(window_start=window.start).values_list("kind", flat=True))
    alerts = []
    for rule in RULES:
        breach = rule(window)
        if breach is None or breach.kind in fired:
            continue
        alert = _fire(breach, window)
        if alert is not None:
            alerts.append(alert)
    return alerts


def _fire(breach: Breach, window: Window) -> Alert | None:
    alert, created = Alert.objects.get_or_create(
        kind=breach.kind,
        window_start=window.start,
        defaults={
            "window_end": window.end,
            "title": breach.title,
            "detail": breach.detail,
            "value": breach.value,
            "threshold": breach.threshold,
        },
    )
    if not created:
        return None  # another worker fired it (and mailed it) a moment ago
    logger.error(
        "Alert: %s. %s",
        alert.title,
        alert.detail,
        extra={"alert": breach.kind.value, "value": breach.value, "threshold": breach.threshold},
    )
    body = render_to_string("ops/alert_email.txt", {"alert": alert, "breach": breach})
    try:
        mail_admins(alert.title, body)
    except Exception:  # the row and the log line stand; a mail server may be away
        logger.exception("could not mail the alert %r to the admins", alert.title)
    return alert


def open_alerts() -> QuerySet[Alert]:
    """The alerts no one has acknowledged, newest first (the staff dashboard shows them)."""
    return Alert.objects.open()


class Throttle:
    """Says when something is due, at most once every `every` seconds."""

    def __init__(self, every: float) -> None:
        self.every = every
        self._last: float | None = None
        self._lock = threading.Lock()

    def due(self, at: float) -> bool:
        with self._lock:
            if self._last is not None and at - self._last < self.every:
                return False
            self._last = at
            return True


_throttle = Throttle(EVALUATE_EVERY_SECONDS)


def alerts_evaluate_if_due() -> list[Alert]:
    """`alerts_evaluate` when this process has not done it in the last minute."""
    if not _throttle.due(time.monotonic()):
        return []
    return alerts_evaluate()


def _usd(amount: float) -> str:
    return f"${amount:,.2f}"
