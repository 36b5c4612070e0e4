"""What a user (or the API) does to a run: stop it, continue or resume it, answer its
approval, end it paused. Each checks the run's state under a lock and queues it again."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

import redis
from django.db import transaction
from django.utils import timezone

from agents.endings import ending_events
from agents.events import Event
from agents.state import TerminationReason
from chat.models import Conversation, Run, RunStatus
from ops import caps
from ops.heartbeat import redis_client
from runs.errors import InvalidInput, RunConflict
from runs.events import append_events, publish_events, save_notice
from runs.queue import enqueue

logger = logging.getLogger(__name__)


def cancel_key(run_id: object) -> str:
    """The Redis key whose presence asks the worker running `run_id` to stop."""
    return f"oracle:run:{run_id}:cancel"


def run_cancel(*, run: Run) -> Run:
    """Stop a run, whatever it is doing when the Stop arrives (Stop always wins, SPEC 6a):
    decided on its row under a lock, so an Approve or a worker's claim a moment before
    cannot turn it into a refusal.

    Paused: it ends with the reason of the limit it paused at (cancelled, if it waited
    for an approval). Queued to start: it ends at once. Queued to go on (approved,
    continued, resumed) or running: the worker is asked to stop it; one that has not
    begun again ends cancelled before any tool or model call (`runs.runner`), one that
    runs stops within a second. Already stopping or finished: nothing changes."""
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        if locked.status == RunStatus.PAUSED:
            return _queue(locked, "stop")
        if locked.status == RunStatus.FINISHED or locked.pending_action in ENDINGS:
            return locked  # queued to end already (a Stop, an expiry): it will
        queued_to_start = locked.status == RunStatus.QUEUED and locked.pending_action == "start"
        now = timezone.now()
        if queued_to_start:
            locked.status, locked.reason, locked.failure_class = RunStatus.FINISHED, "cancelled", ""
            locked.pending_action, locked.finished_at = "", now
            locked.save(update_fields=["status", "reason", "failure_class", "pending_action",
                                       "finished_at"])  # fmt: skip
            events = _write_cancelled_before_start(locked)
        else:
            # The database holds the request (a worker reads it within seconds, even with
            # Redis away, and before it takes up a queued run again).
            locked.cancel_requested_at = now
            locked.save(update_fields=["cancel_requested_at"])
    if queued_to_start:
        publish_events(locked, events)
        return locked
    # The Redis key makes it take effect within a fifth of a second.
    try:
        redis_client(timeout=1.0).set(cancel_key(run.pk), str(now.timestamp()), ex=3600)
    except redis.RedisError as error:
        logger.warning("stop of run %s goes through the database only: %r", run.pk, error)
    return locked


# The actions a queued run may wait for that end it: a Stop has nothing left to do.
ENDINGS = ("stop", "expire")


def _write_cancelled_before_start(run: Run) -> list[Event]:
    """The ending of a run stopped while queued: its System message and `run.finished`
    (no answer: the engine never started)."""
    conversation = Conversation.objects.select_for_update().get(pk=run.conversation_id)
    _, notice, finished = ending_events(
        TerminationReason.CANCELLED, hit=None, final_text="", failure_class=None,
        counters=run.counters, notice="Stopped before the Oracle started working.",
    )  # fmt: skip
    save_notice(conversation, run, notice)
    return append_events(run, [notice, finished])


def requeue(run: Run, action: str, allowed: Callable[[Run], bool]) -> Run:
    """Queue the run again for `action` when `allowed` holds of its row, read under a lock
    (the rules are the model's: `Run.can_resume`, `is_paused`, `can_continue`)."""
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        if not is_latest(locked):
            raise RunConflict("Only the latest run of a conversation can be continued.")
        if not allowed(locked):
            raise RunConflict(f"This run cannot be {action}d now (it is {locked.status}).")
        return _queue(locked, action)


def _queue(locked: Run, action: str) -> Run:
    """Queue the run for `action`; the caller's transaction holds its row locked."""
    locked.status = RunStatus.QUEUED
    locked.pending_action = action
    locked.finished_at = None
    locked.cancel_requested_at = None
    locked.queued_at = timezone.now()
    locked.save(update_fields=["status", "pending_action", "finished_at",
                               "cancel_requested_at", "queued_at"])  # fmt: skip
    # A key left behind names a time before this queuing: the host ignores it.
    with contextlib.suppress(redis.RedisError):
        redis_client(timeout=1.0).delete(cancel_key(locked.pk))
    enqueue(locked)
    return locked


def is_latest(run: Run) -> bool:
    return not Run.objects.filter(
        conversation_id=run.conversation_id, created_at__gt=run.created_at
    ).exists()


def run_continue(*, run: Run) -> Run:
    """Continue a stopped or paused run (no new user message; fresh round counters).
    An interrupted run is resumed where it was. While a daily spending cap is used up
    another round would stop at once: it is refused, saying which cap and when it renews.
    """
    used_up = caps.used_up_cap(run.conversation.owner_id)
    if used_up is not None:
        raise RunConflict(used_up)
    if run.can_resume:
        return requeue(run, "resume", lambda r: r.can_resume)
    if run.status == RunStatus.PAUSED and run.pending_approval:
        raise RunConflict("This run waits for your Approve or Deny of a tool call.")
    if run.status == RunStatus.PAUSED:
        return requeue(run, "continue", lambda r: r.is_paused)
    return requeue(run, "continue", lambda r: r.can_continue)


def run_answer_approval(
    *, run: Run, approved: bool, call_id: object = None, always: object = False
) -> Run:
    """The user's Approve or Deny of a run's tool call that waits for it (of every such
    call when `call_id` is None). "Always allow" (`always`, with Approve) lets the tool
    run without asking in this conversation from now on. When no call waits any longer
    the run goes on (queued for a worker)."""
    if call_id is not None and (not isinstance(call_id, str) or not call_id.strip()):
        raise InvalidInput({"call_id": ["Must be the id of a tool call that waits."]})
    if not isinstance(always, bool):
        raise InvalidInput({"always": ["Must be true or false."]})
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        waiting = locked.pending_approval
        if locked.status != RunStatus.PAUSED or not waiting:
            raise RunConflict("This run does not wait for an approval.")
        chosen = [call for call in waiting if call_id is None or call["id"] == call_id]
        if not chosen:
            raise InvalidInput({"call_id": ["No tool call of this run waits with that id."]})
        state = dict(locked.state or {})
        answers = dict(state.get("approvals") or {})
        for call in chosen:
            answers[call["id"]] = approved
        state["approvals"] = answers
        locked.state = state
        locked.save(update_fields=["state"])
        if always and approved:
            conversation = Conversation.objects.select_for_update().get(pk=locked.conversation_id)
            given = {tuple(call["grant"]) for call in chosen if call.get("grant")}
            conversation.tool_grants = sorted(map(list, set(conversation.grants()) | given))
            conversation.save(update_fields=["tool_grants"])
        if any(call["id"] not in answers for call in waiting):
            return locked  # others still wait
    return requeue(locked, "approve", lambda r: r.is_paused)


def run_approve(*, run: Run, call_id: object = None, always: object = False) -> Run:
    """Approve a waiting tool call (or all of them): it runs, and the run goes on."""
    return run_answer_approval(run=run, approved=True, call_id=call_id, always=always)


def run_deny(*, run: Run, call_id: object = None) -> Run:
    """Deny a waiting tool call (or all): the model is told the user declined it."""
    return run_answer_approval(run=run, approved=False, call_id=call_id)
