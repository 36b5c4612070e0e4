"""A run whose worker was lost or stopped: ended as `interrupted`, its partial answer
and running tool steps explained, and queued again by itself a few times (a transient
failure) before it waits for the user's Resume."""

from __future__ import annotations

import contextlib
import json
import logging
from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agents.endings import ending_events
from agents.events import Event, EventType
from agents.state import FailureClass, LimitHit, Metric, TerminationReason
from agents.wording import figures, final_message, number
from chat.models import Conversation, Message, Role, Run, RunStatus, silent_since
from runs.control import is_latest, requeue
from runs.errors import RunConflict
from runs.events import append_events, publish_events, save_notice

logger = logging.getLogger(__name__)


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
    cutoff = silent_since(now)
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
        again = resume and run.auto_resumes < MAX_AUTO_RESUMES and is_latest(run)
        if again:
            retry = run.auto_resumes + 1
            notice = notice.replace(RESUME, (
                "What it produced is kept above, and Oracle is picking the run up where it "
                f"stopped (automatic retry {retry} of {MAX_AUTO_RESUMES})."
            ))  # fmt: skip
        events = _write_interruption(run, notice, hit)
    publish_events(run, events)
    if again:
        Run.objects.filter(pk=run.pk).update(auto_resumes=F("auto_resumes") + 1)
        with contextlib.suppress(RunConflict):  # the user pressed Resume first
            run = requeue(run, "resume", lambda r: r.can_resume)
    return run


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
        partial = Message(conversation=conversation, run=run, seq=conversation.next_seq(),
                          role=Role.ASSISTANT, metadata={"final": True}, content=text)  # fmt: skip
    partial.termination_reason = "interrupted"
    partial.failure_class = "transient_infra"
    partial.save()
    ending = ending_events(
        TerminationReason.INTERRUPTED, hit=hit, final_text=text, notice=notice,
        counters=run.counters, failure_class=FailureClass.TRANSIENT_INFRA,
    )  # fmt: skip
    save_notice(conversation, run, ending[1])
    return append_events(run, [*_cut_off_tools(run), *ending])


TOOL_CUT_OFF = (
    "Not finished: the worker running it stopped. Resume runs it again if its tool is safe "
    "to run twice; otherwise the model is told it may or may not have acted."
)


def _cut_off_tools(run: Run) -> list[Event]:
    """Say so in the tool steps that were running when the run stopped (their rows and,
    for the pages watching, `tool.result` events); Resume runs again those whose tools
    are idempotent, and tells the model of the others (`agents.run.tool_step`)."""
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
    from runs.engine import model_for, model_name_for, user_config

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
