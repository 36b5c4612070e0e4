"""Conversations, their messages and the runs that answer them.

The main chain of a run (what the Oracle said, the tools it called, the notices
it got) is written as `Message` rows while the run goes on; every event the
run emitted is kept as a `RunEvent`, so a client that reconnects can be
replayed exactly what it missed.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models

from agents.events import EventType
from agents.mcp_consent import Grant, grant_of
from agents.state import TerminationReason
from agents.subagents import SubagentEvent
from agents.wording import REASON_LABELS

# What no text field stores: NUL (PostgreSQL refuses it) and lone surrogates (no UTF-8).
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def resumes(reason: str) -> bool:
    """Whether a run that ended for `reason` is picked up where it stopped (Resume)
    rather than given another round (Continue): the one rule the controls, the run
    services and the buttons read."""
    return reason == TerminationReason.INTERRUPTED


def silent_since(now: datetime) -> datetime:
    """A running run whose last heartbeat is older than this has lost its worker
    (`ORACLE_RUN_HEARTBEAT_TIMEOUT`): what `Run.is_lost` shows and the sweeper records."""
    return now - timedelta(seconds=settings.ORACLE_RUN_HEARTBEAT_TIMEOUT)


class Conversation(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )
    title = models.CharField(max_length=200, blank=True)
    skill = models.CharField(max_length=64, default="default")
    # The model this conversation's runs use; "" = the user's default (their settings).
    model = models.CharField(max_length=200, blank=True)
    last_message_seq = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Set by a delete, which can be undone for a while: the sweeper purges it after that.
    deleted_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # The MCP tools the user chose "Always allow" for: in this conversation they need no
    # approval. Each is [server, tool, fingerprint] (`agents.mcp_consent.Grant`), bound
    # to the server and the tool's own name and schema, never to the model's name for it.
    tool_grants = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["owner", "-updated_at"]),
            # The staff dashboard reads a run's skill and owner from here, not the row.
            models.Index(fields=["id", "skill", "owner"], name="conversation_skill_owner"),
        ]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.id}"

    def grants(self) -> list[Grant]:
        """The tools "Always allow"ed here, as (server, tool, fingerprint)."""
        return [grant for value in self.tool_grants if (grant := grant_of(value))]

    def next_seq(self, *also: str) -> int:
        """The conversation's next message number, saved (with the fields `also` names)."""
        self.last_message_seq += 1
        self.save(update_fields=["last_message_seq", "updated_at", *also])
        return self.last_message_seq


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class Message(models.Model):
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    run = models.ForeignKey(
        "Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="messages"
    )
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True)
    # severity, metric, value, limit for system messages; name, arguments, ok for tools.
    metadata = models.JSONField(default=dict, blank=True)
    termination_reason = models.CharField(max_length=32, blank=True)
    failure_class = models.CharField(max_length=32, blank=True)
    # An earlier version (of an answer regenerated, or of a message edited and sent
    # again): still shown, browsable, but no longer what the model reads.
    superseded = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "seq"], name="message_seq_unique")
        ]

    def __str__(self) -> str:
        return f"{self.role} #{self.seq}"


# After these a finished run can go on with Continue (a fresh round). An interrupted
# run is resumed where it stopped instead; a completed one has nothing left to do.
CONTINUABLE = frozenset(TerminationReason) - {
    TerminationReason.COMPLETED,
    TerminationReason.INTERRUPTED,
}


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"


# A run's counters, as its fields, its events' and the gauges name them.
COUNTERS = ("iterations", "tool_calls", "tokens", "cost_usd", "elapsed_ms")


class Run(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    # What the next worker to claim this queued run must do: start, continue, resume, stop.
    pending_action = models.CharField(max_length=16, blank=True)
    user_message = models.ForeignKey(
        "Message", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    state = models.JSONField(null=True, blank=True)  # AgentState.to_json(), for pause/resume
    reason = models.CharField(
        max_length=32, blank=True, choices=[(r.value, REASON_LABELS[r]) for r in TerminationReason]
    )
    failure_class = models.CharField(max_length=32, blank=True)
    # The limit action its latest round ran under (the user's settings then), for the
    # staff dashboard; "" before a worker first claimed it.
    limit_action = models.CharField(max_length=8, blank=True)
    iterations = models.PositiveIntegerField(default=0)
    tool_calls = models.PositiveIntegerField(default=0)
    tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    elapsed_ms = models.PositiveIntegerField(default=0)
    last_event_seq = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # When it was (last) queued: a run still queued long after was never handed to a
    # worker (the broker was away) and a worker picks it up from here.
    queued_at = models.DateTimeField(null=True, blank=True)
    # A stop asked for, kept here as well as in Redis: it holds while Redis is away.
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    # Raised by every claim: a worker writes a run only while its lease is the run's, so
    # a run resumed elsewhere (its first worker thought lost) never runs twice at once.
    lease = models.PositiveIntegerField(default=0)
    # Times a lost worker's run was resumed without the user (at most MAX_AUTO_RESUMES).
    auto_resumes = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "queued_at"], name="run_status_queued"),
            # The dashboard's day tallies: which days' runs finished or were queued again
            # since they were counted.
            models.Index(fields=["finished_at"], name="run_finished_at"),
            models.Index(fields=["queued_at"], name="run_queued_at"),
            # The staff dashboard's statistics of finished runs come from this index alone
            # (SQLite reads no row; a run's row holds its large `state` before its counters).
            models.Index(
                fields=[
                    *("created_at", "reason", "conversation", "id", "status"),
                    *("iterations", "tokens", "cost_usd", "elapsed_ms", "limit_action"),
                ],
                condition=models.Q(status=RunStatus.FINISHED),
                name="run_finished_stats",
            ),
        ]
        constraints = [
            # One active run per conversation (SPEC 8: a second message gets a 409).
            models.UniqueConstraint(
                fields=["conversation"],
                condition=models.Q(
                    status__in=[RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.PAUSED]
                ),
                name="one_active_run_per_conversation",
            )
        ]

    def __str__(self) -> str:
        return f"Run {self.id} ({self.status})"

    @property
    def counters(self) -> dict[str, int | float]:
        """What the run has used so far (saved at each checkpoint), by COUNTERS' names."""
        return {name: getattr(self, name) for name in COUNTERS}

    @property
    def is_active(self) -> bool:
        return self.status != RunStatus.FINISHED

    @property
    def can_continue(self) -> bool:
        """Whether Continue gives this finished run another round."""
        return self.status == RunStatus.FINISHED and self.reason in CONTINUABLE

    @property
    def pending_approval(self) -> list[dict[str, Any]]:
        """The tool calls a paused run waits for the user to approve or deny."""
        if self.status != RunStatus.PAUSED or not self.state:
            return []
        return list(self.state.get("awaiting_approval") or [])

    @property
    def can_resume(self) -> bool:
        """Whether Resume picks this run up where its worker left it."""
        return self.status == RunStatus.FINISHED and resumes(self.reason)

    @property
    def is_paused(self) -> bool:
        """Whether the run waits at a limit (or for an approval) for the user."""
        return self.status == RunStatus.PAUSED

    def is_lost(self, now: datetime) -> bool:
        """Whether the worker running this run has been silent for longer than allowed
        (`ORACLE_RUN_HEARTBEAT_TIMEOUT`): a read can show it before a worker's sweeper
        records it as interrupted (reads never write)."""
        return (
            self.status == RunStatus.RUNNING
            and self.heartbeat_at is not None
            and self.heartbeat_at < silent_since(now)
        )


class RunEvent(models.Model):
    """One event of a run, as sent to clients; replayed from here on reconnect."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=32)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="run_event_seq_unique")]
        # The few kinds of event the staff dashboard counts, each in a small index of its
        # own: the events table holds every token streamed, and only these are indexed.
        indexes = [
            models.Index(
                fields=["run"],
                condition=models.Q(type=EventType.RUN_STARTED),
                name="run_event_started",
            ),
            *(
                models.Index(fields=["created_at", "run"], condition=models.Q(type=kind), name=name)
                for kind, name in (
                    (EventType.RUN_PAUSED, "run_event_paused"),
                    (EventType.BUDGET_EXTENDED, "run_event_extended"),
                    (EventType.CONTEXT_COMPACTED, "run_event_compacted"),
                    (EventType.CONTEXT_REFUSED, "run_event_refused"),
                    (SubagentEvent.FINISHED, "run_event_subagent"),
                )
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type} #{self.seq}"
