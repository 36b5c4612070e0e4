"""Running the engine for one run inside a Celery worker (the task is a thin wrapper).

A run is claimed with a compare-and-set on its row (queued → running), so a
task delivered twice, or to two workers, drives the run once. It then runs on
the process's run host (`runs.host`): its `RunRecorder` keeps the main chain and
the events for the host's journal to write, the host refreshes its heartbeat,
and a stop arrives as a Redis key (or a database flag) that the host polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agents.attachments import Picture
from agents.cancel import CancelToken
from agents.config import AgentConfig, OperatorLimits
from agents.context.ledger import Summary
from agents.context.window import ContextWindow
from agents.events import EventSink
from agents.loop import (
    CheckpointSink,
    RunDeps,
    RunResult,
    answer_approval,
    continue_run,
    resume_run,
    start_run,
    stop_paused_run,
)
from agents.skills import skill_named
from agents.state import AgentState
from agents.state import RunStatus as EngineStatus
from agents.subagents import DELEGATE_TOOL, AgentType
from chat.models import Message, Role, Run, RunStatus
from ops.caps import run_cost_limits
from runs.attachments import for_model, pictures_for, sees_images
from runs.engine import engine_deps, model_for, model_name_for, user_config, window_for
from runs.recorder import RunRecorder
from runs.stops import GOING_ON, stopped_before_going_on
from runs.tools import run_tools

logger = logging.getLogger(__name__)


@dataclass
class Job:
    run: Run
    action: str
    config: AgentConfig
    operator: OperatorLimits
    question: str
    history: list[dict[str, Any]]
    state: AgentState | None
    # A resumed run's tool steps that were cut off, by call id: the engine runs them
    # again and their results fill these rows (not new ones).
    tool_steps: dict[str, Message]
    agent_types: list[AgentType] = field(default_factory=list)  # whom it may delegate to
    mcp_servers: list[str] = field(default_factory=list)  # the MCP servers the user uses
    # The images the user's messages attached, for a model that sees images (by id).
    pictures: dict[int, Picture] = field(default_factory=dict)
    window: ContextWindow | None = None  # the model's context window, when known
    # The summary an earlier run made of the history's first messages, sent in their
    # place; the seq of each message of the history and the question, in order.
    summary: Summary | None = None
    history_seqs: list[int] = field(default_factory=list)

    def recorded(self) -> dict[str, Any]:
        """What the run's recorder is given of the job: the tool steps it fills again,
        where the history is in the conversation."""
        return {"tool_steps": self.tool_steps, "history_seqs": self.history_seqs}


class _Hooks(TypedDict):
    """The engine's keyword arguments that every driven action takes."""

    on_event: EventSink
    cancel: CancelToken
    on_checkpoint: CheckpointSink


async def drive(
    job: Job,
    recorder: RunRecorder,
    cancel: CancelToken,
    stop_asked: Callable[[], Awaitable[bool]] | None = None,
) -> RunResult:
    """Run the engine for the job's action, recording as it goes. `stop_asked` reads
    whether a Stop came since the run was queued, as late as can be before the engine
    takes up a run that waited (`GOING_ON`): then nothing it waited for runs."""
    from toolbox.hub import process_hub, publish, starting_notice, with_notice

    conversation = job.run.conversation
    skill = skill_named(conversation.skill)
    hub = await process_hub() if job.mcp_servers else None
    deps = engine_deps(
        model=model_for(
            model_name_for(conversation, user_choice=job.config.model),
            read_pause=recorder.journal.read_pause,
        ),
        tree=skill.tree(job.config, job.operator),  # under the skill's own limits
        tools=run_tools(
            user_id=conversation.owner_id,
            agent_types=job.agent_types if skill.allows_tool(DELEGATE_TOOL) else (),
            mcp=hub,
            mcp_servers=job.mcp_servers,
            grants=conversation.grants(),
        ),
        pictures=job.pictures,
        window=job.window,
    )
    if job.action in GOING_ON and stop_asked is not None and await stop_asked():
        job.action = stopped_before_going_on(job.action, job.state, cancel)
    try:
        # The servers still starting serve the next run; this one says it goes without them.
        noting = with_notice(recorder, starting_notice(hub, job.mcp_servers))
        return await _drive(job, deps, recorder, cancel, noting)
    finally:
        if hub is not None:
            await publish(hub)  # a server that died or came back shows on the Tools page


async def _drive(
    job: Job, deps: RunDeps, recorder: RunRecorder, cancel: CancelToken, on_event: EventSink
) -> RunResult:
    hooks: _Hooks = {"on_event": on_event, "cancel": cancel, "on_checkpoint": recorder.checkpoint}
    if job.action == "start":
        return await start_run(
            job.question, deps, history=job.history, run_id=str(job.run.pk),
            summary=job.summary, **hooks,
        )  # fmt: skip
    assert job.state is not None, f"a run to {job.action} needs its saved state"
    if job.action == "continue":
        return await continue_run(job.state, deps, **hooks)
    if job.action == "resume":
        return await resume_run(job.state, deps, **hooks)
    if job.action == "approve":
        return await answer_approval(job.state, deps, **hooks)
    if job.action in ("stop", "expire"):  # expire: it waited on the user too long
        return await stop_paused_run(
            job.state, deps, on_event=on_event, expired=job.action == "expire"
        )
    raise ValueError(f"unknown run action {job.action!r}")


def outcome(result: RunResult) -> dict[str, Any]:
    state = result.state
    paused = state.status is EngineStatus.PAUSED
    return {
        "status": RunStatus.PAUSED if paused else RunStatus.FINISHED,
        "pending_action": "",
        "state": json.loads(state.to_json()),
        "reason": result.reason.value if result.reason else "",
        "failure_class": state.failure_class.value if state.failure_class else "",
        **state.counters(),
        "finished_at": None if paused else timezone.now(),
    }


def claim(run_id: str) -> Job | None:
    """Take a queued run (compare-and-set, so a run is driven once) with what it needs."""
    with transaction.atomic():
        claimed = Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
            status=RunStatus.RUNNING, lease=F("lease") + 1
        )
        if not claimed:
            return None
        # Its first heartbeat is when the row is ours: the update may have waited seconds
        # for a busy database (SQLite's write lock), which must not count as silence.
        now = timezone.now()
        run = Run.objects.select_related("conversation__owner", "user_message").get(pk=run_id)
        config, operator = user_config(run.conversation.owner)
        run.heartbeat_at, run.started_at = now, run.started_at or now
        run.limit_action = config.limit_action.value  # this round's, for the staff dashboard
        run.save(update_fields=["heartbeat_at", "started_at", "limit_action"])
    action = run.pending_action
    if action == "resume" and not run.state:
        # Lost before its first checkpoint was saved (its worker died, or could not write,
        # as it began): nothing was done that a resume could keep, so it starts again.
        action = "start"
    history: list[dict[str, Any]] = []
    history_seqs: list[int] = []
    question = ""
    # A model that sees images is shown those the messages attached (loaded for every
    # action: a continued run's calls send them again); any other is told it cannot.
    sees = sees_images(model_name_for(run.conversation, user_choice=config.model))
    pictures = pictures_for(run) if sees else {}
    if action == "start":
        question = for_model(run.user_message, sees_images=sees) if run.user_message else ""
    earlier = Message.objects.filter(
        conversation=run.conversation,
        seq__lt=run.user_message.seq if run.user_message else 0,
        role__in=[Role.USER, Role.ASSISTANT],
        superseded=False,  # earlier versions of an answer or a message are not read
    ).order_by("seq")
    for message in earlier:
        if message.role == Role.USER or message.metadata.get("final"):
            # Every action knows where the history's messages are (a summary made in
            # any round names the last it covers); only a start sends them anew.
            history_seqs.append(message.seq)
            if action == "start":
                history.append(
                    {"role": message.role, "content": for_model(message, sees_images=sees)}
                )
    if run.user_message:
        history_seqs.append(run.user_message.seq)
    state = AgentState.from_json(json.dumps(run.state)) if run.state else None
    # The daily spending caps: what is left of them caps this run's cost.
    operator = run_cost_limits(operator, run=run, state=state, action=action, now=now)
    # A resumed run, or one that waited for approval, runs its last step's tools now (a
    # stopped one closes those that waited): their results fill the steps already shown.
    closes = ("resume", "approve", "stop", "expire")
    tool_steps = _cut_off_steps(run, state) if action in closes else {}
    return Job(
        run,
        action,
        config,
        operator,
        question,
        history,
        state,
        tool_steps,
        agent_types=_subagent_types(),
        mcp_servers=_mcp_servers(run.conversation.owner),
        pictures=pictures,
        window=window_for(model_name_for(run.conversation, user_choice=config.model)),
        summary=summary_for(run.conversation, history_seqs[:-1]) if action == "start" else None,
        history_seqs=history_seqs,
    )


def summary_for(conversation: Any, history_seqs: list[int]) -> Summary | None:
    """The newest summary an earlier run made of this conversation's first messages that
    still holds: the messages it covers are the history's first ones (an edit or a
    regenerate since would have set them aside)."""
    rows = Message.objects.filter(
        conversation=conversation, role=Role.SYSTEM, superseded=False,
        metadata__context__summarised=True,
    ).order_by("-seq")  # fmt: skip
    for row in rows[:5]:
        context = row.metadata["context"]
        covers, through = int(context.get("covers") or 0), context.get("through_seq")
        if 0 < covers <= len(history_seqs) and history_seqs[covers - 1] == through:
            return Summary(str(context.get("summary") or ""), covers)
    return None


def _mcp_servers(user: Any) -> list[str]:
    from toolbox.selectors import servers_enabled_for

    return servers_enabled_for(user=user)


def _subagent_types() -> list[AgentType]:
    from settings_ui.selectors import subagent_types  # settings_ui reads chat's models

    return subagent_types()


def _cut_off_steps(run: Run, state: AgentState | None) -> dict[str, Message]:
    """The rows of the tool calls a resumed run will run again: those of its saved
    state's last message, when that is a step whose tools had not answered."""
    last = state.messages[-1] if state and state.messages else {}
    ids = [call["id"] for call in last.get("tool_calls") or []]
    if last.get("role") != "assistant" or not ids:
        return {}
    rows = run.messages.filter(role=Role.TOOL, metadata__id__in=ids).order_by("seq")
    return {str(row.metadata["id"]): row for row in rows}  # the latest row of each call


async def run_unattended(
    question: str, deps: RunDeps, *, on_event: EventSink, approve_all: bool
) -> RunResult:
    """One run nobody can press anything in (`manage.py ask`, a terminal): a tool call
    that asks first is declined (approved with `approve_all`), a pause ends the run with
    its limit's reason, and Ctrl-C stops it as a Stop would."""
    cancel = CancelToken()
    with contextlib.suppress(NotImplementedError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, cancel.cancel)
    result = await start_run(question, deps, on_event=on_event, cancel=cancel)
    while result.status is EngineStatus.PAUSED and result.state.awaiting_approval:
        for call in result.state.awaiting_approval:
            result.state.approvals[call["id"]] = approve_all
        result = await answer_approval(result.state, deps, on_event=on_event, cancel=cancel)
    if result.status is EngineStatus.PAUSED:
        result = await stop_paused_run(result.state, deps, on_event=on_event)
    return result
