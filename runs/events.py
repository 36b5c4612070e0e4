"""Events written for a run by a web process or the sweeper, not by its worker (a run
stopped while queued, a lost worker's ending, a model-given title): numbered after the
run's last, saved, logged as limit events, then published to the pages watching."""

from __future__ import annotations

from uuid import UUID

from django.db import transaction

from agents.events import Event
from chat.models import Conversation, Message, Role, Run, RunEvent
from chat.notices import notice_metadata
from ops import limit_log
from runs.live import publish_now


def save_notice(conversation: Conversation, run: Run, notice: Event) -> None:
    """The System message row of a `system.notice` event written here, not by a worker."""
    Message.objects.create(
        conversation=conversation, run=run, seq=conversation.next_seq(), role=Role.SYSTEM,
        content=notice["text"], metadata=notice_metadata(notice),
    )  # fmt: skip


def append_events(run: Run, events: list[Event]) -> list[Event]:
    """Number `events` after the run's last and save them; the events, numbered."""
    for seq, event in enumerate(events, start=run.last_event_seq + 1):
        event["seq"] = seq
    RunEvent.objects.bulk_create(
        RunEvent(run=run, seq=e["seq"], type=e["type"], data=e) for e in events
    )
    Run.objects.filter(pk=run.pk).update(last_event_seq=events[-1]["seq"])
    # An ending written here (a lost worker's, a queued run's) is a limit event too.
    transaction.on_commit(lambda: _log_limit_events(run.pk, events))
    return events


def _log_limit_events(run_id: UUID, events: list[Event]) -> None:
    if any(limit_log.is_limit_event(e["type"], e.get("reason")) for e in events):
        run = Run.objects.select_related("conversation__owner").get(pk=run_id)
        for event in events:
            limit_log.record(run, event, {})


def publish_events(run: Run, events: list[Event]) -> None:
    """Best-effort: the events are saved, and pages catch up from the database."""
    batch = {"conversation_id": str(run.conversation_id), "run_id": str(run.pk), "events": events}
    publish_now([batch])
