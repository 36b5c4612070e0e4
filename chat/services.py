"""Writes for chat: every change to conversations, messages, runs and tokens goes through here."""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import redis
from celery.result import AsyncResult
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.services import api_token_create as api_token_create  # moved to accounts
from accounts.services import api_token_revoke as api_token_revoke  # moved to accounts
from agents.endings import ending_events
from agents.events import Event, EventType
from agents.offline_model import OFFLINE_MODEL_NAME
from agents.skills import DEFAULT_SKILL, skill_names
from agents.state import FailureClass, LimitHit, Metric, TerminationReason
from agents.wording import figures, final_message, number
from chat.live import publish_now
from chat.models import (
    CONTINUABLE,
    Conversation,
    Message,
    Role,
    Run,
    RunEvent,
    RunStatus,
)
from chat.recorder import NOTICE_FIELDS, cancel_key
from ops import caps, limit_log
from ops.heartbeat import redis_client
from oracle.celery import app as celery_app

logger = logging.getLogger(__name__)
TITLE_MAX = 200
# How long a queued run may wait for its task before a worker's sweeper takes it.
QUEUED_GRACE_SECONDS = 5.0


class InvalidInput(ValueError):
    """Bad input from a user: the message says what is wrong, nothing was changed."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))


def _clean_title(title: object) -> str:
    if not isinstance(title, str):
        raise InvalidInput({"title": ["Must be text."]})
    cleaned = " ".join(title.split())
    if len(cleaned) > TITLE_MAX:
        raise InvalidInput({"title": [f"At most {TITLE_MAX} characters."]})
    return cleaned


def conversation_create(
    *, owner: User, title: object = "", skill: object = DEFAULT_SKILL.name
) -> Conversation:
    """Start a conversation; its skill is chosen now and kept for all its runs."""
    if not isinstance(skill, str) or skill not in skill_names():
        known = ", ".join(skill_names())
        raise InvalidInput({"skill": [f"Unknown skill. Choose one of: {known}."]})
    return Conversation.objects.create(owner=owner, title=_clean_title(title), skill=skill)


def conversation_rename(*, conversation: Conversation, title: object) -> Conversation:
    conversation.title = _clean_title(title)
    conversation.save(update_fields=["title", "updated_at"])
    return conversation


def conversation_delete(*, conversation: Conversation) -> None:
    """Delete a conversation so that it can be brought back: it is hidden at once, its
    run stopped, and purged by `conversations_purge_deleted` a minute later."""
    now = timezone.now()
    # An update, not save(): the time it last changed stays as it was, for an Undo.
    Conversation.objects.filter(pk=conversation.pk).update(deleted_at=now)
    conversation.deleted_at = now
    for run in conversation.runs.filter(status__in=ACTIVE):
        with contextlib.suppress(RunConflict):  # it ended meanwhile
            run_cancel(run=run)


# --- Runs -----------------------------------------------------------------------------

ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.PAUSED)


class RunConflict(Exception):
    """The request does not fit the run's (or conversation's) current state: HTTP 409."""


def _enqueue(run: Run) -> None:
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


def _next_seq(conversation: Conversation, *also: str) -> int:
    """The conversation's next message number, saved (with the fields `also` names)."""
    conversation.last_message_seq += 1
    conversation.save(update_fields=["last_message_seq", "updated_at", *also])
    return conversation.last_message_seq


def _clean_content(content: object) -> str:
    if not isinstance(content, str):
        raise InvalidInput({"content": ["Must be text."]})
    if not content.strip():
        raise InvalidInput({"content": ["Write a message first."]})
    limit = settings.ORACLE_MAX_MESSAGE_CHARS
    if len(content) > limit:
        raise InvalidInput(
            {"content": [f"At most {limit:,} characters (this one has {len(content):,})."]}
        )
    return content


@transaction.atomic
def message_post(
    *, conversation: Conversation, content: object, edit_of: Message | None = None
) -> tuple[Message, Run]:
    """Add the user's message and queue a run to answer it."""
    text = _clean_content(content)
    conversation = _idle(conversation)
    titled = not conversation.title
    if titled:
        conversation.title = first_words(text)
    # The run's id is chosen first, so that the message and its run are written once
    # each (the database checks the keys between them when the transaction commits).
    run_id = uuid4()
    message = Message.objects.create(
        conversation=conversation, seq=_next_seq(conversation, *(["title"] if titled else [])),
        role=Role.USER, content=text, run_id=run_id,
        metadata={"edit_of": edit_of.pk} if edit_of is not None else {},
    )  # fmt: skip
    message.run = _queue_answer(conversation, message, run_id=run_id)  # as written
    return message, message.run


def first_words(text: str) -> str:
    """A conversation's title until its model names it: its first message's start."""
    return " ".join(text.split())[:60]


@dataclass(frozen=True)
class TitleRequest:
    """What the model is asked to name a conversation from (`chat.host` asks it)."""

    conversation_id: UUID
    title: str  # the title it has now (the first words of the question)
    question: str
    answer: str
    model: str


def title_wanted(*, run_id: str) -> TitleRequest | None:
    """The conversation's first run completed and nobody named it yet: the model may.
    None when automatic titles are off, or the built-in offline model answered."""
    from chat.engine import model_name_for, user_config

    if not settings.ORACLE_AUTO_TITLES:
        return None
    run = Run.objects.select_related("conversation__owner", "user_message").get(pk=run_id)
    conversation, question = run.conversation, run.user_message
    if (
        run.reason != TerminationReason.COMPLETED
        or question is None
        or conversation.title != first_words(question.content)
        or conversation.runs.exclude(pk=run.pk).exists()
    ):
        return None
    model = model_name_for(conversation, user_choice=user_config(conversation.owner)[0].model)
    final = run.messages.filter(role=Role.ASSISTANT, termination_reason="completed").last()
    if not model or model == OFFLINE_MODEL_NAME or final is None:
        return None
    return TitleRequest(conversation.pk, conversation.title, question.content, final.content, model)


def conversation_retitle(*, run_id: str, wanted: TitleRequest, title: str) -> None:
    """Give the conversation the model's title, unless someone renamed it meanwhile,
    and show it on its pages (a `conversation.titled` event of the run)."""
    if not title or title == wanted.title:
        return
    with transaction.atomic():
        renamed = Conversation.objects.filter(pk=wanted.conversation_id, title=wanted.title)
        if not renamed.update(title=title):
            return
        run = Run.objects.select_for_update().get(pk=run_id)
        events = _append_events(run, [{"type": "conversation.titled", "title": title}])
    _publish(run, events)


def _idle(conversation: Conversation) -> Conversation:
    """The conversation, locked, when no run of it works; else RunConflict."""
    conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
    if conversation.runs.filter(status__in=ACTIVE).exists():
        raise RunConflict("The Oracle is still working on the last message: stop it or wait.")
    return conversation


def _queue_answer(
    conversation: Conversation, message: Message, *, run_id: UUID | None = None
) -> Run:
    run = Run.objects.create(
        id=run_id or uuid4(), conversation=conversation, pending_action="start",
        user_message=message, queued_at=timezone.now(),
    )  # fmt: skip
    _enqueue(run)
    return run


def _last_user_message(conversation: Conversation) -> Message | None:
    return conversation.messages.filter(role=Role.USER, superseded=False).order_by("-seq").first()


@transaction.atomic
def run_regenerate(*, run: Run) -> Run:
    """Answer the last message again with a new run. The earlier answer stays, as an
    earlier version: shown on request, no longer read by the model."""
    conversation = _idle(run.conversation)
    last = _last_user_message(conversation)
    if last is None or run.user_message_id != last.pk:
        raise RunConflict("Only the answer to the last message can be regenerated.")
    Message.objects.filter(run__user_message=last).exclude(pk=last.pk).update(superseded=True)
    conversation.save(update_fields=["updated_at"])
    return _queue_answer(conversation, last)


@transaction.atomic
def message_edit(*, message: Message, content: object) -> tuple[Message, Run]:
    """Send the last message again, changed. It and its answers stay as the earlier
    version; the new message is answered by a new run."""
    text = _clean_content(content)
    conversation = _idle(message.conversation)
    last = _last_user_message(conversation)
    if last is None or message.pk != last.pk:
        raise RunConflict("Only the last message can be edited.")
    Message.objects.filter(conversation=conversation, seq__gte=message.seq).update(superseded=True)
    return message_post(conversation=conversation, content=text, edit_of=message)


def conversation_set_model(*, conversation: Conversation, model: object) -> Conversation:
    """Use `model` for this conversation's next runs ("" = the user's own default)."""
    from settings_ui.policy import allowed_models

    if not isinstance(model, str) or (model and model not in allowed_models()):
        raise InvalidInput({"model": ["Pick one of the models this server offers."]})
    conversation.model = model
    conversation.save(update_fields=["model", "updated_at"])
    return conversation


def run_cancel(*, run: Run) -> Run:
    """Stop a run: a running one within a second (Redis signal), a queued one at once,
    a paused one with the reason of the limit it paused at."""
    if run.status == RunStatus.PAUSED:
        return run_stop_paused(run=run)
    if run.status == RunStatus.FINISHED:
        return run
    # The database holds the request (a worker reads it within seconds, even with Redis
    # away); the Redis key makes it take effect within a fifth of a second.
    now = timezone.now()
    Run.objects.filter(pk=run.pk).update(cancel_requested_at=now)
    try:
        redis_client(timeout=1.0).set(cancel_key(run.pk), str(now.timestamp()), ex=3600)
    except redis.RedisError as error:
        logger.warning("stop of run %s goes through the database only: %r", run.pk, error)
    with transaction.atomic():
        still_queued = Run.objects.filter(
            pk=run.pk, status=RunStatus.QUEUED, pending_action="start"
        ).update(status=RunStatus.FINISHED, reason="cancelled", failure_class="",
                 pending_action="", finished_at=timezone.now())  # fmt: skip
        if still_queued:
            events = _write_cancelled_before_start(run)
    run.refresh_from_db()
    if still_queued:
        _publish(run, events)
    return run


def _write_cancelled_before_start(run: Run) -> list[Event]:
    """The ending of a run stopped while queued: its System message and `run.finished`
    (no answer: the engine never started)."""
    conversation = Conversation.objects.select_for_update().get(pk=run.conversation_id)
    _, notice, finished = ending_events(
        TerminationReason.CANCELLED, hit=None, final_text="", failure_class=None,
        counters=run.counters, notice="Stopped before the Oracle started working.",
    )  # fmt: skip
    _save_notice(conversation, run, notice)
    return _append_events(run, [notice, finished])


def _save_notice(conversation: Conversation, run: Run, notice: Event) -> None:
    """The System message row of a `system.notice` event written here, not by a worker."""
    Message.objects.create(
        conversation=conversation, run=run, seq=_next_seq(conversation), role=Role.SYSTEM,
        content=notice["text"], metadata={key: notice[key] for key in NOTICE_FIELDS},
    )  # fmt: skip


def _append_events(run: Run, events: list[Event]) -> list[Event]:
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


def _requeue(run: Run, action: str, allowed: dict[str, object]) -> Run:
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        if not _is_latest(locked):
            raise RunConflict("Only the latest run of a conversation can be continued.")
        if not all(
            getattr(locked, field) in values  # type: ignore[operator]
            for field, values in allowed.items()
        ):
            raise RunConflict(f"This run cannot be {action}d now (it is {locked.status}).")
        locked.status = RunStatus.QUEUED
        locked.pending_action = action
        locked.finished_at = None
        locked.cancel_requested_at = None
        locked.queued_at = timezone.now()
        locked.save(update_fields=["status", "pending_action", "finished_at",
                                   "cancel_requested_at", "queued_at"])  # fmt: skip
        # A key left behind names a time before this queuing: the host ignores it.
        with contextlib.suppress(redis.RedisError):
            redis_client(timeout=1.0).delete(cancel_key(run.pk))
        _enqueue(locked)
    return locked


def run_continue(*, run: Run) -> Run:
    """Continue a stopped or paused run (no new user message; fresh round counters).
    An interrupted run is resumed where it was. While a daily spending cap is used up
    another round would stop at once: it is refused, saying which cap and when it renews.
    """
    used_up = caps.used_up_cap(run.conversation.owner_id)
    if used_up is not None:
        raise RunConflict(used_up)
    if run.can_resume:
        return _requeue(run, "resume", {"status": [RunStatus.FINISHED], "reason": ["interrupted"]})
    if run.status == RunStatus.PAUSED and run.pending_approval:
        raise RunConflict("This run waits for your Approve or Deny of a tool call.")
    if run.status == RunStatus.PAUSED:
        return _requeue(run, "continue", {"status": [RunStatus.PAUSED]})
    return _requeue(
        run, "continue", {"status": [RunStatus.FINISHED], "reason": sorted(CONTINUABLE)}
    )


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
            names = set(conversation.allowed_tools) | {call["name"] for call in chosen}
            conversation.allowed_tools = sorted(names)
            conversation.save(update_fields=["allowed_tools"])
        if any(call["id"] not in answers for call in waiting):
            return locked  # others still wait
    return _requeue(locked, "approve", {"status": [RunStatus.PAUSED]})


def run_approve(*, run: Run, call_id: object = None, always: object = False) -> Run:
    """Approve a waiting tool call (or all of them): it runs, and the run goes on."""
    return run_answer_approval(run=run, approved=True, call_id=call_id, always=always)


def run_deny(*, run: Run, call_id: object = None) -> Run:
    """Deny a waiting tool call (or all): the model is told the user declined it."""
    return run_answer_approval(run=run, approved=False, call_id=call_id)


def run_stop_paused(*, run: Run) -> Run:
    """End a paused run with the reason of the limit it paused at."""
    return _requeue(run, "stop", {"status": [RunStatus.PAUSED]})


RESUME = "What it produced is kept above; press Resume to pick the run up where it stopped."
# A lost worker's run is resumed without the user this many times (SPEC 4: transient
# failures are retried automatically); then it waits for Resume.
MAX_AUTO_RESUMES = 2


def lost_notice(hit: LimitHit) -> str:
    """A worker went silent (it died, or lost the database) for longer than allowed."""
    return (
        f"The worker running this answer was lost: no word from it for "
        f"{figures(hit.metric, hit.value, hit.limit)}. {RESUME}"
    )


def stopped_notice(hit: LimitHit) -> str:
    """A worker was stopped (a deploy, Ctrl-C) and its grace period ran out."""
    return (
        f"The worker running this answer was stopped, and the answer was not done within "
        f"its {number(hit.metric, hit.limit)} seconds of grace. {RESUME}"
    )


FAILED_NOTICE = (
    "Something went wrong inside Oracle while it worked on this answer (the error is in "
    "the worker's log). What it produced is kept above; press Resume to try again."
)


def runs_mark_interrupted() -> list[Run]:
    """Runs whose worker stopped writing (no heartbeat) become `interrupted`, resumable."""
    now = timezone.now()
    limit = settings.ORACLE_RUN_HEARTBEAT_TIMEOUT
    cutoff = now - timedelta(seconds=limit)
    stale = Run.objects.filter(status=RunStatus.RUNNING, heartbeat_at__lt=cutoff)
    interrupted = []
    for run_id, heartbeat_at in stale.values_list("pk", "heartbeat_at"):
        assert heartbeat_at is not None  # heartbeat_at__lt matches no NULL
        hit = LimitHit(Metric.SILENCE, (now - heartbeat_at).total_seconds(), limit)
        run = run_interrupt(
            run_id=run_id, notice=lost_notice(hit), hit=hit, still_stale_before=cutoff,
            resume=True,
        )  # fmt: skip
        if run is not None:
            interrupted.append(run)
    return interrupted


def run_interrupt(
    *,
    run_id: UUID | str,
    notice: str,
    hit: LimitHit | None = None,
    still_stale_before: datetime | None = None,
    lease: int | None = None,
    resume: bool = False,
) -> Run | None:
    """End a running run as `interrupted`: its partial answer explained, a System
    message, and the events sent to whoever watches. With `resume` (a lost or stopped
    worker: a transient failure) it is queued again at once, up to MAX_AUTO_RESUMES
    times; otherwise, or after that, the message offers Resume. None when the run was
    no longer running (or had a fresh heartbeat, or another `lease`)."""
    running = Run.objects.filter(pk=run_id, status=RunStatus.RUNNING)
    if still_stale_before is not None:
        running = running.filter(heartbeat_at__lt=still_stale_before)
    if lease is not None:
        running = running.filter(lease=lease)
    with transaction.atomic():
        if not running.update(status=RunStatus.FINISHED, reason="interrupted",
                              failure_class="transient_infra", finished_at=timezone.now(),
                              pending_action=""):  # fmt: skip
            return None  # its worker wrote meanwhile, or another sweeper got it
        run = Run.objects.select_related("conversation").get(pk=run_id)
        again = resume and run.auto_resumes < MAX_AUTO_RESUMES and _is_latest(run)
        if again:
            retry = run.auto_resumes + 1
            notice = notice.replace(RESUME, (
                "What it produced is kept above, and Oracle is picking the run up where it "
                f"stopped (automatic retry {retry} of {MAX_AUTO_RESUMES})."
            ))  # fmt: skip
        events = _write_interruption(run, notice, hit)
    _publish(run, events)
    if again:
        Run.objects.filter(pk=run.pk).update(auto_resumes=F("auto_resumes") + 1)
        with contextlib.suppress(RunConflict):  # the user pressed Resume first
            run = _requeue(run, "resume", {"status": [RunStatus.FINISHED],
                                           "reason": ["interrupted"]})  # fmt: skip
    return run


def _is_latest(run: Run) -> bool:
    return not Run.objects.filter(
        conversation_id=run.conversation_id, created_at__gt=run.created_at
    ).exists()


def _write_interruption(run: Run, notice: str, hit: LimitHit | None) -> list[Event]:
    conversation = Conversation.objects.select_for_update().get(pk=run.conversation_id)
    # The answer being streamed when the run stopped, if any: the run's last message,
    # still a draft. A finished step (one that called tools) or an earlier round's
    # answer is left as it is, and not quoted again.
    last = run.messages.order_by("-seq").first()
    draft = (
        last
        if last is not None
        and last.role == Role.ASSISTANT
        and not last.metadata.get("final")
        and not last.metadata.get("tool_calls")
        else None
    )
    text = final_message(
        TerminationReason.INTERRUPTED, hit, draft.content if draft is not None else ""
    )
    if draft is not None:
        tokens, cost = _cut_off_usage(run, draft.content)  # what streamed, before the notice
        partial = draft
        partial.content = text
        partial.metadata = {**partial.metadata, "final": True}
        run.tokens += tokens
        run.cost_usd = round(run.cost_usd + cost, 6)
        Run.objects.filter(pk=run.pk).update(tokens=run.tokens, cost_usd=run.cost_usd)
    else:
        partial = Message(conversation=conversation, run=run, seq=_next_seq(conversation),
                          role=Role.ASSISTANT, metadata={"final": True}, content=text)  # fmt: skip
    partial.termination_reason = "interrupted"
    partial.failure_class = "transient_infra"
    partial.save()
    ending = ending_events(
        TerminationReason.INTERRUPTED, hit=hit, final_text=text, notice=notice,
        counters=run.counters, failure_class=FailureClass.TRANSIENT_INFRA,
    )  # fmt: skip
    _save_notice(conversation, run, ending[1])
    return _append_events(run, [*_cut_off_tools(run), *ending])


TOOL_CUT_OFF = "Not finished: the worker running it stopped. Resume runs it again."


def _cut_off_tools(run: Run) -> list[Event]:
    """Say so in the tool steps that were running when the run stopped (their rows and,
    for the pages watching, `tool.result` events); Resume runs them again."""
    events: list[Event] = []
    for step in run.messages.filter(role=Role.TOOL, metadata__status="running"):
        step.content = TOOL_CUT_OFF
        step.metadata = {**step.metadata, "ok": False, "status": "done"}
        step.save(update_fields=["content", "metadata"])
        events.append(
            {
                "type": EventType.TOOL_RESULT,
                "id": step.metadata.get("id"),
                "name": step.metadata.get("name"),
                "ok": False,
                "content": TOOL_CUT_OFF,
            }
        )
    return events


def _cut_off_usage(run: Run, streamed: str) -> tuple[int, float]:
    """Tokens and cost of the model call that the interruption cut off, estimated: its
    provider sends the usage only at the end. The prompt is the run's last checkpoint."""
    from agents.state import AgentState
    from chat.engine import model_for, model_name_for, user_config

    try:
        choice = user_config(run.conversation.owner)[0].model
        model = model_for(model_name_for(run.conversation, user_choice=choice))
        messages = AgentState.from_json(json.dumps(run.state)).messages if run.state else []
        prompt = model.count_tokens(messages)
        completion = (len(streamed) + 3) // 4  # about four characters a token
        return prompt + completion, model.price(prompt, completion)
    except Exception:  # an estimate must never stop the interruption being recorded
        logger.exception("could not estimate the cut-off call of run %s", run.pk)
        return 0, 0.0


def _publish(run: Run, events: list[Event]) -> None:
    """Best-effort: the events are saved, and pages catch up from the database."""
    batch = {"conversation_id": str(run.conversation_id), "run_id": str(run.pk), "events": events}
    publish_now([batch])


# --- Deleted conversations ---------------------------------------------------------------

# A deleted conversation can be restored until then; the sweeper purges it after.
PURGE_AFTER_SECONDS = 60


def conversation_restore(*, conversation: Conversation) -> Conversation:
    """Undo `conversation_delete`: the conversation comes back as it was."""
    Conversation.objects.filter(pk=conversation.pk).update(deleted_at=None)
    conversation.deleted_at = None
    return conversation


def conversations_purge_deleted() -> int:
    """Delete for good the conversations deleted more than `PURGE_AFTER_SECONDS` ago,
    with their messages, runs and events (one whose run has not stopped yet waits for
    it). Called by the workers' sweeper; returns how many went."""
    cutoff = timezone.now() - timedelta(seconds=PURGE_AFTER_SECONDS)
    expired = Conversation.objects.filter(deleted_at__lt=cutoff).exclude(runs__status__in=ACTIVE)
    batch = list(expired.values_list("pk", flat=True)[:100])
    _, deleted = Conversation.objects.filter(pk__in=batch).delete()
    return deleted.get(Conversation._meta.label, 0)
