"""The limit log: one JSON line for every limit event of every run (SPEC 9).

The worker's `RunRecorder` receives every event a run emits and hands the limit
events here, as they happen. Each becomes one line of the `oracle.limits` logger,
which settings.LOGGING sends as JSON (python-json-logger) to `var/log/limits.jsonl`
(rotated at 10 MB, five kept) and to stdout, for a post-mortem or a log shipper.

Limit events are:

- `system.notice`: soft warnings ("Approaching the iteration limit"), the notice of
  an extension, a pause or an ending (with its `reason`);
- `budget.extended`, `run.paused`, `run.resumed`;
- `run.finished`, whatever its reason, `completed` included: every ending is logged,
  so the log alone tells how many runs ended at a limit out of how many ended;
- `subagent.finished` when the subagent ended for any reason but `completed`: a
  helper stopped at one of its limits (its `agent_type` is the helper's type and its
  counters its own);
- `tool.refused`: a tool call refused before it ran at one of the operator's bounds
  (`agents.config.CallBounds`), its `tool` named, with the `reason`
  (`arguments_too_large`, `max_calls_per_run`, `subagents_per_run`, `subagent_depth`,
  `subagents_at_once`)
  and the `metric`, `value` and `limit` it passed (a helper's own refused calls too);
- the model's context window: `context.compacted` (a request shortened to fit it,
  with its `model`, `window`, tokens `before` and `after`, whether older turns were
  `summarised`, how many older tool results were `stubbed` and messages `cut`) and
  `context.refused` (the provider refused a request as too long: its `model`, the
  `window` learnt, the tokens `requested`, the `ratio` of the provider's count to ours
  and the HTTP `status`). Never the summary itself: it is what the user wrote.

A line carries the event, the run, its user, conversation, agent type and skill,
the counters (iterations, tool calls, tokens, cost, elapsed time), the reason and,
where the event has them, the metric, value, limit and severity (or the context
window's figures above); the formatter adds the timestamp (UTC).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.db.models import Model

from agents.events import APPROVAL, EventType
from agents.state import TerminationReason
from agents.subagents import MAIN_AGENT, SubagentEvent

if TYPE_CHECKING:
    from chat.models import Run

logger = logging.getLogger("oracle.limits")
errors = logging.getLogger(__name__)

SUBAGENT_FINISHED = SubagentEvent.FINISHED
# The types the recorder hands over. A set, tested first: `assistant.delta` (most of a
# run's events) must cost nothing more than this lookup.
EVENT_TYPES = frozenset(
    {
        EventType.SYSTEM_NOTICE,
        EventType.BUDGET_EXTENDED,
        EventType.RUN_PAUSED,
        EventType.RUN_RESUMED,
        EventType.RUN_FINISHED,
        SUBAGENT_FINISHED,
        EventType.TOOL_REFUSED,
        EventType.CONTEXT_COMPACTED,
        EventType.CONTEXT_REFUSED,
    }
)
COUNTER_KEYS = ("iterations", "tool_calls", "tokens", "cost_usd")
# The context window's figures a `context.compacted` or `context.refused` carries.
CONTEXT_FIELDS = (
    *("model", "window", "before", "after", "summarised", "stubbed", "cut"),
    *("requested", "ratio", "status"),
)
# Copied from the event when it has them (a notice's figures, an extension's ceilings,
# the context window's).
EVENT_FIELDS = (
    *("metric", "value", "limit", "severity", "from", "to", "failure_class", "call_id"),
    *CONTEXT_FIELDS,
)


def is_limit_event(event_type: str, reason: str | None) -> bool:
    """Whether an event of this type and reason is a limit event (see the module)."""
    if event_type == SUBAGENT_FINISHED:
        return bool(reason) and reason != TerminationReason.COMPLETED
    # A run that waits for the user's approval of a tool call is at no limit.
    return event_type in EVENT_TYPES and reason != APPROVAL


def compaction_kind(summarised: object) -> str:
    """A `context.compacted`'s kind, for the log and `/metrics`: `summarised` (a compaction
    call summarised older turns) or `shortened` (older tool results stubbed, messages cut,
    images named, but no summary)."""
    return "summarised" if summarised else "shortened"


def record(run: Run, event: dict[str, Any], counters: dict[str, Any]) -> None:
    """Log `event` of `run` if it is a limit event; `counters` are the run's as they are
    now (a `run.finished` brings its own). Never raises: the run goes on regardless."""
    try:
        line = build_line(run, event, counters)
        if line is not None:
            logger.info(_message(line), extra=line)
    except Exception:  # a line lost is better than a run broken
        errors.exception("could not log the limit event %s", event.get("type"))


def build_line(run: Run, event: dict[str, Any], counters: dict[str, Any]) -> dict[str, Any] | None:
    """The fields of the log line for `event` of `run`; None if it is no limit event."""
    kind = str(event.get("type", ""))
    reason = event.get("reason") or None
    if not is_limit_event(kind, reason):
        return None
    if kind == SUBAGENT_FINISHED:
        agent_type = str(event.get("agent_type") or "")
        counters = dict(event.get("counters") or {})
    else:
        agent_type = MAIN_AGENT
        if kind == EventType.RUN_FINISHED:
            counters = event
        elif not counters:  # nothing checkpointed yet this round: the run's saved totals
            counters = run.counters
    shown = {key: counters.get(key, 0) for key in COUNTER_KEYS}
    elapsed_s = round((counters.get("elapsed_ms") or 0) / 1000, 3)
    line: dict[str, Any] = {
        "event": kind,
        "run_id": str(run.pk),
        "seq": event.get("seq"),
        **_owner(run),
        "agent_type": agent_type,
        "counters": {**shown, "elapsed_s": elapsed_s},
        "elapsed_s": elapsed_s,
        "cost_usd": shown["cost_usd"],
        "reason": reason,
    }
    line.update({key: event[key] for key in EVENT_FIELDS if event.get(key) is not None})
    if kind == EventType.TOOL_REFUSED:
        line["tool"] = event.get("name")
    return line


def _owner(run: Run) -> dict[str, Any]:
    """The user, conversation and skill of `run`, from what is loaded already (the worker
    claims a run with its conversation and owner): the recorder runs on an event loop,
    where a query would be an error."""
    conversation = _loaded(run, "conversation")
    owner = _loaded(conversation, "owner") if conversation is not None else None
    return {
        "user": {"id": owner.pk, "username": owner.get_username()} if owner else None,
        "conversation_id": str(run.conversation_id) if run.conversation_id else None,
        "skill": conversation.skill if conversation is not None else None,
    }


def _loaded(instance: Model, relation: str) -> Any:
    field = instance._meta.get_field(relation)
    return getattr(instance, relation) if field.is_cached(instance) else None  # type: ignore[union-attr]


def _message(line: dict[str, Any]) -> str:
    """The line's words for a person reading the log."""
    words = [line["event"], line["agent_type"]]
    if line.get("metric") is not None:
        words.append(f"{line['metric']} {line.get('value')}/{line.get('limit')}")
    if line["event"] == EventType.CONTEXT_COMPACTED:  # "gpt-4o-mini 31400→5200/8192 summarised"
        figures = f"{line.get('before')}→{line.get('after')}/{line.get('window')}"
        words += [line.get("model"), figures, compaction_kind(line.get("summarised"))]
    elif line["event"] == EventType.CONTEXT_REFUSED:  # "gpt-4o-mini 9300/8192"
        words += [line.get("model"), f"{line.get('requested')}/{line.get('window')}"]
    if line["reason"]:
        words.append(line["reason"])
    return " ".join(str(word) for word in words)
