"""Prometheus metrics at `/metrics` (SPEC 9), read from the database at scrape time.

Runs happen in the Celery workers and the web process serves this page, so nothing
is counted in memory as it happens: a custom collector reads the figures from the
`Run` and `RunEvent` rows each time Prometheus scrapes. Three queries a scrape:

- `Run`, one pass grouped by `status`: the active and queued runs, the tokens and
  cost of every run, the duration histogram of the finished ones (conditional
  counts over `elapsed_ms`). One row per run, a few narrow columns.
- `RunEvent`, the largest table (every event of every run): its highest `id` (the
  primary key index), then the counted events (`run.started`, `run.finished` and
  the limit events of `ops.limit_log`, the context window's among them) grouped by
  type and their metric, severity, reason, model and whether a compaction summarised,
  **only past the last id already counted**: a range of the primary key.
  Counts up to an id are kept in this process once the id is old enough that no
  transaction still writing can hold a lower one (`SETTLE_SECONDS`); the events
  after it are counted again at each scrape. Only a process's first scrape reads
  the whole table. Events are never deleted but with their conversation, so these
  counters do not go down when one is purged (the run sums above do).

Access: a staff user's session, or `Authorization: Bearer <ORACLE_METRICS_TOKEN>`.
Anyone else gets a 404, as if there were no such page.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db.models import Case, Count, Max, Q, Sum, Value, When
from django.db.models.fields.json import KT
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.views.decorators.cache import never_cache
from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from agents.events import EventType
from chat.models import Run, RunEvent, RunStatus
from ops.limit_log import EVENT_TYPES, compaction_kind, is_limit_event

# Upper bounds of the run duration histogram, in seconds (a run's time limit is at
# most 600 s, plus its wind-down; a continued run adds its rounds).
DURATION_BUCKETS = (1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0)
STARTED, FINISHED = EventType.RUN_STARTED, EventType.RUN_FINISHED
COMPACTED, REFUSED = EventType.CONTEXT_COMPACTED, EventType.CONTEXT_REFUSED
COUNTED_TYPES = (STARTED, *sorted(EVENT_TYPES))
# An event id seen this long ago is settled: every transaction that could write a lower
# one has ended (the journal's take milliseconds).
SETTLE_SECONDS = 60.0


class EventKey(NamedTuple):
    """What the counted events are grouped by."""

    type: str
    metric: str
    severity: str
    reason: str
    model: str  # the context window's events'
    summarised: bool  # a `context.compacted` that summarised older turns


class EventTally:
    """How many events of each kind the database holds, brought up to date at each
    scrape by reading only the events past the last settled id."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()  # two scrapes at once would count twice
        self._settled_id = 0
        self._settled: Counter[EventKey] = Counter()
        self._seen: list[tuple[float, int]] = []  # (when, highest id then), oldest first

    def counts(self) -> Counter[EventKey]:
        with self._lock:
            now = self.clock()
            top = RunEvent.objects.aggregate(top=Max("id"))["top"] or 0
            if top < self._settled_id:  # another database (restored, or a test's): anew
                self._settled_id, self._settled, self._seen = 0, Counter(), []
            self._seen.append((now, top))
            settling = [seen for when, seen in self._seen if when <= now - SETTLE_SECONDS]
            self._seen = [pair for pair in self._seen if pair[0] > now - SETTLE_SECONDS]
            settle_to = max([self._settled_id, *settling])
            rows = (
                RunEvent.objects.filter(id__gt=self._settled_id, type__in=COUNTED_TYPES)
                .annotate(
                    metric=KT("data__metric"),
                    severity=KT("data__severity"),
                    reason=KT("data__reason"),
                    model=KT("data__model"),
                    summarised=Case(
                        When(data__summarised=True, then=Value(True)), default=Value(False)
                    ),
                    settled=Case(When(id__lte=settle_to, then=Value(True)), default=Value(False)),
                )
                .values(*EventKey._fields, "settled")
                .annotate(events=Count("id"))
                .order_by()
            )
            fresh: Counter[EventKey] = Counter()
            for row in rows:
                key = EventKey(
                    row["type"],
                    row["metric"] or "",
                    row["severity"] or "",
                    row["reason"] or "",
                    row["model"] or "",
                    bool(row["summarised"]),
                )
                (self._settled if row["settled"] else fresh)[key] += row["events"]
            self._settled_id = settle_to
            return self._settled + fresh


class RunsCollector(Collector):
    """The runs' figures, from the database, at each scrape."""

    def __init__(self, tally: EventTally | None = None) -> None:
        self.tally = tally or EventTally()

    def collect(self) -> Iterable[Metric]:
        yield from self._from_events(self.tally.counts())
        yield from self._from_runs(_run_figures())

    def _from_events(self, counts: Counter[EventKey]) -> Iterable[Metric]:
        started = CounterMetricFamily(
            "oracle_runs_started", "Runs a worker started (a continued run counts once)."
        )
        started.add_metric([], sum(n for key, n in counts.items() if key.type == STARTED))
        yield started
        finished = CounterMetricFamily(
            "oracle_runs_finished",
            "Endings of runs by reason (a run continued after a stop ends once a round).",
            labels=["reason"],
        )
        reasons: Counter[str] = Counter()
        for key, n in counts.items():
            if key.type == FINISHED:
                reasons[key.reason] += n
        for reason, n in sorted(reasons.items()):
            finished.add_metric([reason], n)
        yield finished
        limits = CounterMetricFamily(
            "oracle_limit_events",
            "Limit events, as the limit log writes them: soft warnings and other notices "
            "(system.notice, by severity; an ending's or a pause's with its reason), "
            "budget.extended, run.paused, run.resumed, run.finished, subagent.finished "
            "at a limit, tool.refused (a call refused at an operator's bound, by reason), "
            "context.compacted and context.refused.",
            labels=["event", "metric", "severity", "reason"],
        )
        logged: Counter[tuple[str, str, str, str]] = Counter()
        for key, n in counts.items():
            if is_limit_event(key.type, key.reason or None):
                logged[key.type, key.metric, key.severity, key.reason] += n
        for labels, n in sorted(logged.items()):
            limits.add_metric(list(labels), n)
        yield limits
        yield from self._context_window(counts)

    def _context_window(self, counts: Counter[EventKey]) -> Iterable[Metric]:
        compactions = CounterMetricFamily(
            "oracle_context_compactions",
            "Requests shortened to fit the model's context window, by model and kind: "
            "summarised (a compaction call summarised older turns) or shortened (older tool "
            "results stubbed or long messages cut, no summary).",
            labels=["model", "kind"],
        )
        refusals = CounterMetricFamily(
            "oracle_context_refusals",
            "Requests the provider refused as too long for the model's context window "
            "(the run learnt the window, shortened the request and sent it again), by model.",
            labels=["model"],
        )
        shortened: Counter[tuple[str, str]] = Counter()
        refused: Counter[str] = Counter()
        for key, n in counts.items():
            if key.type == COMPACTED:
                shortened[key.model, compaction_kind(key.summarised)] += n
            elif key.type == REFUSED:
                refused[key.model] += n
        for labels, n in sorted(shortened.items()):
            compactions.add_metric(list(labels), n)
        for model, n in sorted(refused.items()):
            refusals.add_metric([model], n)
        yield compactions
        yield refusals

    def _from_runs(self, rows: list[dict[str, Any]]) -> Iterable[Metric]:
        by_status = {row["status"]: row for row in rows}
        tokens = CounterMetricFamily(
            "oracle_tokens", "Tokens the runs used (prompt and completion, helpers included)."
        )
        tokens.add_metric([], sum(row["tokens_sum"] or 0 for row in rows))
        yield tokens
        cost = CounterMetricFamily("oracle_cost_usd", "What the runs cost, in US dollars.")
        cost.add_metric([], sum(row["cost_sum"] or 0.0 for row in rows))
        yield cost
        active = GaugeMetricFamily(
            "oracle_runs_active",
            "Runs under way: running, or paused at a limit.",
            labels=["status"],
        )
        for status in (RunStatus.RUNNING, RunStatus.PAUSED):
            active.add_metric([status.value], by_status.get(status, {}).get("runs", 0))
        yield active
        queued = GaugeMetricFamily(
            "oracle_runs_queued", "Runs waiting for a worker (the queue's depth)."
        )
        queued.add_metric([], by_status.get(RunStatus.QUEUED, {}).get("runs", 0))
        yield queued
        done = by_status.get(RunStatus.FINISHED, {})
        duration = HistogramMetricFamily(
            "oracle_run_duration_seconds",
            "Run time of the finished runs (time paused does not count).",
        )
        buckets = [(str(b), done.get(f"le_{i}", 0)) for i, b in enumerate(DURATION_BUCKETS)]
        duration.add_metric(
            [],
            [*buckets, ("+Inf", done.get("runs", 0))],
            (done.get("elapsed_ms_sum") or 0) / 1000,
        )
        yield duration


def _run_figures() -> list[dict[str, Any]]:
    """One pass over `Run`, grouped by status."""
    buckets = {
        f"le_{i}": Count("id", filter=Q(elapsed_ms__lte=seconds * 1000))
        for i, seconds in enumerate(DURATION_BUCKETS)
    }
    rows = (
        Run.objects.values("status")
        .annotate(
            runs=Count("id"),
            tokens_sum=Sum("tokens"),
            cost_sum=Sum("cost_usd"),
            elapsed_ms_sum=Sum("elapsed_ms"),
            **buckets,
        )
        .order_by()
    )
    return [dict(row) for row in rows]


COLLECTOR = RunsCollector()
REGISTRY = CollectorRegistry(auto_describe=False)
REGISTRY.register(COLLECTOR)


def may_read_metrics(request: HttpRequest) -> bool:
    """A staff user's session, or the operator's metrics token (when one is set)."""
    header = request.headers.get("Authorization")
    if header is not None:
        scheme, _, raw = header.partition(" ")
        token: str = settings.ORACLE_METRICS_TOKEN
        return bool(token) and scheme.lower() == "bearer" and _same(raw.strip(), token)
    return bool(request.user.is_authenticated and request.user.is_staff)


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


@login_not_required
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    """The figures in Prometheus's text format; a 404 for whoever may not read them."""
    if not may_read_metrics(request):
        raise Http404
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    # The text format Prometheus asks for (Accept), the classic one (0.0.4) by default.
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    return HttpResponse(encode(REGISTRY), content_type=content_type)
