"""Alerts on the last full hour: spend, limit terminations, runs near their limits. Each
fires once per window (a row, an error in the log, a mail to the admins), never again for
the same window, and again for the next one."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.db import IntegrityError, transaction

from chat.models import Conversation, Message, Role, Run, RunStatus
from ops.alerts import Throttle, alerts_evaluate, open_alerts
from ops.models import Alert, AlertKind

NOW = datetime(2026, 3, 2, 15, 5, tzinfo=UTC)  # evaluates 14:00-15:00
HOUR = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
NEXT_HOUR = HOUR + timedelta(hours=1)


@pytest.fixture(autouse=True)
def _admins(settings: object, db: None) -> Iterator[None]:
    settings.ADMINS = [("Olga Operator", "olga@example.com")]  # type: ignore[attr-defined]
    settings.ORACLE_ALERT_COST_PER_HOUR = 10.0  # type: ignore[attr-defined]
    settings.ORACLE_ALERT_TERMINATIONS_PER_HOUR = 5  # type: ignore[attr-defined]
    settings.ORACLE_ALERT_NEAR_LIMIT_SHARE = 0.5  # type: ignore[attr-defined]
    yield


def finished(
    user: User,
    *,
    at: datetime,
    cost: float = 0.0,
    reason: str = "completed",
    warned: bool = False,
) -> Run:
    """A run that finished at `at`, with its ending notice and (`warned`) a soft warning."""
    conversation = Conversation.objects.create(owner=user)
    run = Run.objects.create(
        conversation=conversation,
        status=RunStatus.FINISHED,
        reason=reason,
        cost_usd=cost,
        started_at=at - timedelta(seconds=30),
        finished_at=at,
    )
    notices = []
    if warned:
        notices.append({"severity": "warning", "metric": "iterations", "reason": None})
    if reason != "completed":
        notices.append({"severity": "warning", "metric": "iterations", "reason": reason})
    for seq, metadata in enumerate(notices, start=1):
        Message.objects.create(
            conversation=conversation, run=run, seq=seq, role=Role.SYSTEM, metadata=metadata
        )
    return run


def test_spend_above_the_threshold_fires_once_per_window(
    alice: User, bob: User, caplog: pytest.LogCaptureFixture
) -> None:
    finished(alice, at=HOUR + timedelta(minutes=10), cost=6.0)
    finished(bob, at=HOUR + timedelta(minutes=59), cost=5.0)
    finished(bob, at=HOUR - timedelta(seconds=1), cost=100.0)  # the hour before
    finished(bob, at=NEXT_HOUR, cost=100.0)  # the hour after

    with caplog.at_level(logging.ERROR, logger="oracle.alerts"):
        (alert,) = alerts_evaluate(now=NOW)
    again = alerts_evaluate(now=NOW + timedelta(minutes=30))

    assert again == []
    assert Alert.objects.count() == 1
    assert alert.kind == AlertKind.SPEND
    assert (alert.window_start, alert.window_end) == (HOUR, NEXT_HOUR)
    assert (alert.value, alert.threshold) == (pytest.approx(11.0), 10.0)
    assert "$11.00" in alert.title and "14:00" in alert.title
    assert "alice $6.00" in alert.detail
    (sent,) = mail.outbox
    assert sent.to == ["olga@example.com"]
    assert alert.title in sent.subject
    assert alert.detail in sent.body
    (logged,) = [r for r in caplog.records if r.name == "oracle.alerts"]
    assert logged.levelno == logging.ERROR and alert.title in logged.getMessage()


def test_the_next_window_fires_again(alice: User) -> None:
    finished(alice, at=HOUR + timedelta(minutes=10), cost=11.0)
    finished(alice, at=NEXT_HOUR + timedelta(minutes=10), cost=12.0)

    first = alerts_evaluate(now=NOW)
    second = alerts_evaluate(now=NOW + timedelta(hours=1))

    assert [a.window_start for a in first + second] == [HOUR, NEXT_HOUR]
    assert [a.value for a in first + second] == [11.0, 12.0]
    assert len(mail.outbox) == 2


def test_spend_at_the_threshold_is_no_alert(alice: User) -> None:
    finished(alice, at=HOUR + timedelta(minutes=10), cost=10.0)

    assert alerts_evaluate(now=NOW) == []
    assert mail.outbox == []


def test_a_window_is_only_evaluated_once_it_is_a_minute_old(alice: User) -> None:
    finished(alice, at=HOUR + timedelta(minutes=59, seconds=59), cost=11.0)

    too_soon = alerts_evaluate(now=NEXT_HOUR + timedelta(seconds=30))
    in_time = alerts_evaluate(now=NEXT_HOUR + timedelta(minutes=1))

    assert too_soon == []
    assert [a.window_start for a in in_time] == [HOUR]


def test_more_than_five_limit_terminations_in_an_hour_fire(alice: User) -> None:
    limit_reasons = ["max_iterations", "token_budget", "timeout", "cost_budget", "no_progress"]
    for minute, reason in enumerate([*limit_reasons, "tool_budget_violation"]):
        finished(alice, at=HOUR + timedelta(minutes=minute), reason=reason)
    for reason in ("completed", "cancelled", "provider_error", "interrupted"):
        finished(alice, at=HOUR + timedelta(minutes=30), reason=reason)

    (alert,) = alerts_evaluate(now=NOW)

    assert alert.kind == AlertKind.TERMINATIONS
    assert (alert.value, alert.threshold) == (6, 5)
    assert "max_iterations 1" in alert.detail
    assert len(mail.outbox) == 1
    assert alerts_evaluate(now=NOW) == []


def test_five_limit_terminations_are_no_alert(alice: User) -> None:
    for minute in range(5):
        finished(alice, at=HOUR + timedelta(minutes=minute), reason="tool_errors")

    assert alerts_evaluate(now=NOW) == []


def test_more_than_half_of_ten_runs_near_their_limits_fire(alice: User) -> None:
    for minute in range(10):
        finished(alice, at=HOUR + timedelta(minutes=minute), warned=minute < 6)

    (alert,) = alerts_evaluate(now=NOW)

    assert alert.kind == AlertKind.NEAR_LIMIT
    assert (alert.value, alert.threshold) == (pytest.approx(0.6), 0.5)
    assert "6 of 10 runs" in alert.title
    assert alerts_evaluate(now=NOW) == []
    assert len(mail.outbox) == 1


def test_half_of_the_runs_near_their_limits_is_no_alert(alice: User) -> None:
    for minute in range(10):
        # Ending at a limit is not a warning: its System message carries the reason.
        reason = "max_iterations" if minute >= 5 else "completed"
        finished(alice, at=HOUR + timedelta(minutes=minute), warned=minute < 5, reason=reason)

    assert alerts_evaluate(now=NOW) == []


def test_fewer_than_ten_runs_never_count_as_near_their_limits_too_often(alice: User) -> None:
    for minute in range(9):
        finished(alice, at=HOUR + timedelta(minutes=minute), warned=True)

    assert alerts_evaluate(now=NOW) == []


def test_an_alert_another_worker_fired_first_is_not_mailed_again(alice: User) -> None:
    finished(alice, at=HOUR + timedelta(minutes=10), cost=11.0)
    Alert.objects.create(
        kind=AlertKind.SPEND,
        window_start=HOUR,
        window_end=NEXT_HOUR,
        title="Spend",
        value=11.0,
        threshold=10.0,
    )

    assert alerts_evaluate(now=NOW) == []
    assert mail.outbox == []


def test_the_database_refuses_a_second_alert_for_the_same_window() -> None:
    fields = {"kind": AlertKind.SPEND, "window_start": HOUR, "window_end": NEXT_HOUR}
    Alert.objects.create(**fields, title="first", value=11.0, threshold=10.0)

    with pytest.raises(IntegrityError), transaction.atomic():
        Alert.objects.create(**fields, title="second", value=12.0, threshold=10.0)


def test_open_alerts_are_the_unacknowledged_newest_first(alice: User) -> None:
    fields = {"title": "t", "value": 1.0, "threshold": 0.5}
    older = Alert.objects.create(
        kind=AlertKind.SPEND, window_start=HOUR, window_end=NEXT_HOUR, **fields
    )
    newer = Alert.objects.create(
        kind=AlertKind.TERMINATIONS, window_start=HOUR, window_end=NEXT_HOUR, **fields
    )
    seen = Alert.objects.create(
        kind=AlertKind.NEAR_LIMIT, window_start=HOUR, window_end=NEXT_HOUR, **fields
    )

    seen.acknowledge(by=alice)

    assert list(open_alerts()) == [newer, older]
    assert list(Alert.objects.open()) == [newer, older]
    seen.refresh_from_db()
    assert seen.acknowledged_by == alice and seen.acknowledged_at is not None


def test_the_sweeper_evaluates_at_most_once_a_minute() -> None:
    throttle = Throttle(every=60.0)

    assert [throttle.due(at) for at in (1000.0, 1030.0, 1059.9, 1060.0, 1061.0)] == [
        True,
        False,
        False,
        True,
        False,
    ]
