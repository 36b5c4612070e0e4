"""HTML for the conversation: each message kind once, used both for the page (from
saved `Message` rows) and for the live stream (from run events, as htmx
out-of-band swaps sent over the WebSocket).

Everything a model, a tool or a user wrote goes through `render_markdown`
(assistant text) or is escaped (everything else).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html import unescape
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import escape, strip_tags
from django.utils.safestring import SafeString, mark_safe

from agents import wording
from agents.endings import SPENDING_CAP
from agents.events import EventType
from agents.loop import APPROVAL
from agents.model import ModelProblem
from agents.state import Metric, TerminationReason
from agents.wording import reason_label
from chat.rendering import render_markdown
from chat.streaming import StreamingAnswer
from runs import subagents


def _render(template: str, **context: Any) -> SafeString:
    """A partial of templates/chat/, as one line of HTML (safe: the template escaped it)."""
    return mark_safe(render_to_string(f"chat/{template}", context).strip())


def reason_badge(reason: str) -> SafeString:
    return _render("_reason_badge.html", reason=reason, label=reason_label(reason))


def usage_text(counters: dict[str, Any]) -> str:
    """What a run used, as its answer's foot shows it: '2 iterations · 1 tool call ·
    1,234 tokens · $0.0021 · 4.2 s' (no cost when the model is free)."""
    iterations = int(counters.get("iterations") or 0)
    tool_calls = int(counters.get("tool_calls") or 0)
    parts = [
        f"{iterations:,} iteration{'' if iterations == 1 else 's'}",
        f"{tool_calls:,} tool call{'' if tool_calls == 1 else 's'}",
        f"{int(counters.get('tokens') or 0):,} tokens",
    ]
    cost = float(counters.get("cost_usd") or 0)
    if cost:
        parts.append(wording.number(Metric.COST, cost))
    seconds = (counters.get("elapsed_ms") or 0) / 1000
    parts.append(f"{wording.number(Metric.TIME, seconds)} s")
    return " · ".join(parts)


def answer_foot(
    reason: str, counters: dict[str, Any] | None, run_id: str = "", switch: str = ""
) -> str:
    """The foot of a run's final answer: reason badge, usage, Copy, Regenerate (shown on
    the last answer only) and the switch between its versions."""
    return _render(
        "_answer_foot.html",
        badge=reason_badge(reason),
        usage=usage_text(counters) if counters else "",
        run_id=run_id,
        switch=mark_safe(switch),
    )


def typing(*, show: bool) -> str:
    """The indicator that the Oracle is working and has not written anything yet."""
    return _render("_typing.html", show=show, swap_oob=True)


def announce(text: str) -> str:
    """Read a finished message out to screen readers (the live stream itself is not)."""
    return oob("#announcer", "innerHTML", escape(text[:1000]))


def user_message(message: Any, switch: str = "") -> str:
    """A message the user sent (a `Message`), with Edit and its versions' switch."""
    body = mark_safe(render_markdown(message.content))  # sanitised by render_markdown
    return _render("_user_message.html", message=message, body=body, switch=mark_safe(switch))


def new_turn(message: Any, run_id: str) -> str:
    """A message just sent, with the (empty) section its run's events go into."""
    return _render("_new_turn.html", user=mark_safe(user_message(message)), run_id=run_id)


def version_switch(number: int, count: int) -> str:
    """The "< 2 / 3 >" switch: which version of an answer or a message is in view."""
    return _render("_version_switch.html", number=number, count=count)


def assistant_message(
    element_id: str,
    content: str,
    reason: str = "",
    counters: dict[str, Any] | None = None,
    *,
    run_id: str = "",
    switch: str = "",
) -> SafeString:
    """A saved answer: `content` rendered as Markdown; a run's final answer (`reason`
    given) has its foot."""
    foot = mark_safe(answer_foot(reason, counters, run_id, switch)) if reason else ""
    body = mark_safe(render_markdown(content))
    return _render("_answer.html", id=element_id, body=body, foot=foot)


def streaming_answer(element_id: str, settled: str, tail: str) -> SafeString:
    """An answer as it streams: its finished Markdown blocks, then the block still
    growing (`chat.streaming`); both are HTML from `render_markdown`."""
    return _render(
        "_answer.html",
        id=element_id,
        streaming=True,
        settled=mark_safe(settled),
        tail=mark_safe(tail),
    )


def tool_step(
    element_id: str,
    name: str,
    arguments: Any,
    result: str | None,
    ok: bool | None,
    *,
    subagent: dict[str, Any] | None = None,
    attachments: Any = None,
    waiting: str = "",
    swap_oob: bool = False,
) -> SafeString:
    """A tool call; `ok` None while it runs (`waiting` "approval" while it waits for the
    user's). A `delegate` step holds its subagent; an MCP tool's step, its pictures."""
    shown = json.dumps(arguments, ensure_ascii=False, indent=1) if arguments else "{}"
    return _render(
        "_tool_step.html",
        id=element_id,
        name=name,
        arguments=shown,
        result=result,
        ok=ok,
        waiting=waiting,
        pictures=pictures(attachments, name),
        agent=arguments.get("agent_type")
        if name == "delegate" and isinstance(arguments, dict)
        else "",
        subagent=subagent_panel(element_id, subagent) if subagent else "",
        swap_oob=swap_oob,
    )


def tool_status(element_id: str, *, ok: bool | None, waiting: str = "") -> str:
    """A tool step's state alone, redrawn in its summary."""
    return oob(
        f"#{element_id}-status", "innerHTML", _render("_tool_status.html", ok=ok, waiting=waiting)
    )


# The pictures a tool step shows, inline as data: URLs: only kinds every browser draws
# and none that runs script (an SVG could). agents.mcp checked the data is base64.
PICTURE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def pictures(attachments: Any, name: str) -> list[dict[str, str]]:
    """The images among a tool result's attachments, as the page shows them."""
    shown = []
    for attachment in attachments if isinstance(attachments, list) else []:
        if not isinstance(attachment, dict) or attachment.get("type") != "image":
            continue
        kind, data = attachment.get("mime_type"), attachment.get("data")
        if kind in PICTURE_TYPES and isinstance(data, str) and _BASE64.fullmatch(data):
            shown.append({"src": f"data:{kind};base64,{data}", "alt": f"A picture from {name}"})
    return shown


def tool_progress(progress: Any, total: Any, message: Any) -> str:
    """An MCP tool's last progress report, as its step shows it: "3 of 10: message"."""
    text = str(message or "").strip()
    if isinstance(progress, int | float) and not isinstance(progress, bool):
        figure = f"{progress:g}"
        if isinstance(total, int | float) and not isinstance(total, bool) and total > 0:
            figure = f"{progress:g} of {total:g}"
        text = f"{figure}: {text}" if text else figure
    return text[:200]


def _number(metric: str, value: Any) -> str:
    """A figure as the System messages write it ('$0.045', '10.3', '1,500')."""
    if not isinstance(value, int | float):
        return str(value)
    return wording.number(metric, value) if metric in _METRICS else f"{value:,}"


_METRICS = {metric.value for metric in Metric}
_SETTINGS_PROBLEMS = {problem.value for problem in ModelProblem if problem.needs_settings}
_GAUGE_METRICS = {"cost_usd": Metric.COST, "elapsed_s": Metric.TIME}


def system_message(
    element_id: str, metadata: dict[str, Any], text: str, actions: str = ""
) -> SafeString:
    figures = None
    metric = str(metadata.get("metric") or "")
    if metric and metadata.get("limit") is not None:
        figures = {
            "metric": metric.replace("_", " "),
            "value": _number(metric, metadata.get("value")),
            "limit": _number(metric, metadata.get("limit")),
        }
    return _render(
        "_system_message.html",
        id=element_id,
        severity=str(metadata.get("severity") or "info"),
        figures=figures,
        text=text,
        actions=mark_safe(actions),  # run_actions, from its template
    )


def run_actions(
    run_id: str, *, paused: bool, reason: str, problem: str | None = None
) -> SafeString:
    """Continue (and Stop for a paused run) buttons, posting to the run's API. A model
    that refused the key, the model or the request (`problem`, the notice's kind) would
    refuse a Continue alike: the way to Settings is offered instead. At a used-up daily
    spending cap nothing is offered (a paused run can still be stopped)."""
    if problem == SPENDING_CAP:
        return _render("_run_actions.html", run_id=run_id, paused=paused, cap_used_up=True)
    return _render(
        "_run_actions.html",
        run_id=run_id,
        paused=paused,
        label="Resume" if reason == TerminationReason.INTERRUPTED else "Continue",
        settings_only=reason == "provider_error" and problem in _SETTINGS_PROBLEMS,
    )


def approval_actions(run_id: str, calls: list[dict[str, Any]]) -> SafeString:
    """Approve, Always allow and Deny for each tool call that waits, and Stop."""
    shown = [{"id": str(call.get("id", "")), "name": str(call.get("name", ""))} for call in calls]
    return _render("_approval_actions.html", run_id=run_id, calls=shown)


def stop_controls(run_id: str | None, *, swap_oob: bool = False) -> str:
    """The composer's Stop button while `run_id` works; empty when no run does."""
    return _render("_stop_controls.html", run_id=run_id, swap_oob=swap_oob)


def run_section(run_id: str | None, body: str = "") -> SafeString:
    """The section a run's messages go in (`run_id` None: rows saved without a run)."""
    return _render("_run_section.html", run_id=run_id, body=mark_safe(body))


def oob(target: str, strategy: str, html: str) -> str:
    """An out-of-band swap of `html` into `target` (a CSS selector). The one envelope
    written here rather than in a template: it wraps every streamed piece."""
    return f'<div hx-swap-oob="{strategy}:{target}">{html}</div>'


def stream_state(run_id: str, seq: int) -> str:
    """What the page holds: the run it shows and its last event (sent again on every
    reconnect). An envelope like `oob`: it ends every frame."""
    return (
        f'<div id="stream-state" hx-swap-oob="outerHTML" data-run="{run_id}" '
        f'data-seq="{seq}" hidden></div>'
    )


GAUGES = (  # counter, label, the limit's field, the field of its warning percentage
    ("iterations", "Iterations", "max_iterations", "soft_warning_percent"),
    ("tool_calls", "Tool calls", "max_tool_calls_per_turn", "soft_warning_percent"),
    ("tokens", "Tokens", "token_budget", "token_warning_percent"),
    ("cost_usd", "Cost (USD)", "max_cost_usd", "soft_warning_percent"),
    ("elapsed_s", "Seconds", "timeout_seconds", "soft_warning_percent"),
)


def gauge_rows(
    used: dict[str, Any], limits: dict[str, Any], *, status: str
) -> list[dict[str, Any]]:
    """Each gauge: what the round `used` against the round's `limits` (its settings),
    turning to the warning colour at the user's own warning percentage."""
    rows = []
    for key, label, limit_key, warn_key in GAUGES:
        value = used.get(key, 0) or 0
        limit = limits.get(limit_key)
        if key == "iterations" and limits.get("unlimited_iterations"):
            limit = None
        metric = _GAUGE_METRICS.get(key, Metric.ITERATIONS)
        low = int(limits.get(warn_key) or 70)
        rows.append(
            {
                "key": key,
                "label": label,
                "value": value,
                "limit": limit,
                "shown": _number(metric, value),
                "shown_limit": _number(metric, limit) if limit else "∞",
                "percent": min(100, round(100 * value / limit)) if limit else 0,
                "low": low,
                "high": max(low, 90),
                "ticking": key == "elapsed_s" and status == "running",
            }
        )
    return rows


def gauge(row: dict[str, Any]) -> str:
    """One gauge, to replace its old self (the others read the same)."""
    return _render("_gauge.html", gauge=row, swap_oob=True)


# Whether the Oracle works unseen after each kind of event (the typing indicator).
_WORKING = {
    EventType.RUN_STARTED: True,
    EventType.RUN_RESUMED: True,
    EventType.TOOL_RESULT: True,
    EventType.ASSISTANT_DELTA: False,
    EventType.ASSISTANT_MESSAGE: False,
    EventType.TOOL_CALL: False,
    EventType.RUN_PAUSED: False,
    EventType.RUN_FINISHED: False,
}
STREAMED_TOKENS_STEP = 100  # the gauges move with a streaming answer every ~100 tokens


def subagent_panel(step_id: str, sub: dict[str, Any], *, swap_oob: bool = False) -> SafeString:
    """A subagent inside its `delegate` step: its type and task, its own gauges against
    its own limits, its steps, and how it ended."""
    limits = dict(sub.get("limits") or {})
    limits["max_tool_calls_per_turn"] = limits.get("max_tool_calls")
    status = str(sub.get("status", "running"))
    reason = str(sub.get("reason", ""))
    return _render(
        "_subagent.html",
        id=f"{step_id}-sub",
        sub=sub,
        gauges=gauge_rows(_counters(sub.get("counters") or {}), limits, status=status),
        badge=reason_badge(reason) if reason else "",
        discarded=status == subagents.DISCARDED,
        steps=[_subagent_step(step) for step in sub.get("steps") or []],
        swap_oob=swap_oob,
    )


def _subagent_step(step: dict[str, Any]) -> dict[str, Any]:
    """One line of a subagent's steps: a tool call, its result, or a notice."""
    kind = str(step.get("type", ""))
    if kind == EventType.TOOL_CALL:
        arguments = json.dumps(step.get("arguments") or {}, ensure_ascii=False)
        return {"kind": "call", "name": step.get("name", ""), "text": arguments, "ok": None}
    if kind == EventType.TOOL_RESULT:
        ok = bool(step.get("ok"))
        text = f"{'→' if ok else '✗'} {step.get('content', '')}"
        return {"kind": "result", "name": "", "text": text, "ok": ok}
    return {"kind": "notice", "name": "", "text": str(step.get("text", "")), "ok": None}


def _counters(counters: dict[str, Any]) -> dict[str, Any]:
    """Counters as the gauges count them (seconds, not milliseconds)."""
    return {
        "iterations": counters.get("iterations", 0),
        "tool_calls": counters.get("tool_calls", 0),
        "tokens": counters.get("tokens", 0),
        "cost_usd": counters.get("cost_usd", 0.0),
        "elapsed_s": round((counters.get("elapsed_ms") or 0) / 1000),
    }


@dataclass
class RunView:
    """Turns one run's events, in order, into out-of-band fragments for the page.

    A view fed every event from the first reproduces the page exactly, so a
    reconnecting browser is brought up to date by replaying the saved events
    through a fresh view and sending only those after the browser's last seq.
    """

    run_id: str
    conversation_id: str = ""
    rendered: int = 0  # the seq of the last event rendered
    streaming: StreamingAnswer | None = None  # the answer now streaming, and its text
    final_bubble: str | None = None
    last_notice: str | None = None
    tool_arguments: dict[str, Any] = field(default_factory=dict)
    subagents: dict[str, dict[str, Any]] = field(default_factory=dict)  # by step element
    awaiting: list[dict[str, Any]] = field(default_factory=list)  # calls that wait for approval
    limits: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, Any] = field(default_factory=dict)
    status: str = "running"
    working: bool = False  # the typing indicator shows: the Oracle is at work, unseen
    round_number: int = 1
    before_round: dict[str, Any] = field(default_factory=dict)  # the totals it began with
    _gauges_frame: tuple[Any, ...] = ()
    _gauges_used: dict[str, Any] = field(default_factory=dict)
    _gauges_shown: dict[str, tuple[str, int]] = field(default_factory=dict)

    @property
    def section(self) -> str:
        return f"run-{self.run_id}"

    def render(self, event: dict[str, Any]) -> str:
        handler = getattr(self, "_" + event["type"].replace(".", "_"), None)
        self._count(event)
        html = handler(event) if handler else ""
        working = _WORKING.get(event["type"], self.working)
        if working != self.working:
            self.working = working
            html += typing(show=working)
        return html

    def _count(self, event: dict[str, Any]) -> None:
        if event["type"] == EventType.RUN_FINISHED:
            self.set_counters(event)

    def set_counters(self, counters: dict[str, Any]) -> None:
        """The run's totals so far (from the worker's checkpoints, or its final event)."""
        self.counters = _counters(counters)

    def round_used(self) -> dict[str, Any]:
        """What this round used so far: the totals less those it began with, and the
        tokens of the answer streaming now, estimated (counted when its call ends)."""
        totals = self.counters or _counters({})
        used = {key: value - self.before_round.get(key, 0) for key, value in totals.items()}
        used["cost_usd"] = round(used["cost_usd"], 6)
        streamed = len(self.streaming.text) if self.streaming is not None else 0
        used["tokens"] += streamed // 4 // STREAMED_TOKENS_STEP * STREAMED_TOKENS_STEP
        return used

    def gauges_if_changed(self, *, always: bool = False) -> str:
        """What changed in the gauges since the last ones sent: nothing (most batches
        are a few words of text, which move no counter), the gauges that moved, or the
        whole (a new status, round or limits)."""
        frame = (self.status, self.round_number, tuple(self.limits.items()))
        used = self.round_used()
        if not always and frame == self._gauges_frame and used == self._gauges_used:
            return ""  # the common case, checked before any gauge is drawn
        self._gauges_used = used
        rows = gauge_rows(used, self.limits, status=self.status)
        shown = {row["key"]: (row["shown"], row["percent"]) for row in rows}
        if always or frame != self._gauges_frame:
            self._gauges_frame, self._gauges_shown = frame, shown
            context = {"status": self.status, "round": self.round_number, "swap_oob": True}
            return _render("_gauges.html", gauges=rows, **context)
        moved = [row for row in rows if shown[row["key"]] != self._gauges_shown.get(row["key"])]
        self._gauges_shown = shown
        return "".join(gauge(row) for row in moved)

    def _append(self, html: str) -> str:
        return oob(f"#{self.section}", "beforeend", html)

    def _run_started(self, event: dict[str, Any]) -> str:
        self.limits = dict(event.get("config") or {})
        self.before_round, self.round_number = {}, 1
        self.status = "running"
        section = run_section(self.run_id)
        return oob("#messages", "beforeend", section) + stop_controls(self.run_id, swap_oob=True)

    def _run_resumed(self, event: dict[str, Any]) -> str:
        self.status = "running"
        self.limits = dict(event.get("config") or self.limits)
        self.before_round = _counters(event.get("before_round") or {})
        self.round_number = int(event.get("round") or self.round_number)
        cleared = self._clear_actions()
        note = _render("_round_divider.html", round=event.get("round", ""))
        return cleared + self._append(note) + stop_controls(self.run_id, swap_oob=True)

    def _assistant_delta(self, event: dict[str, Any]) -> str:
        text = str(event.get("text", ""))
        if self.streaming is None:
            self.streaming = StreamingAnswer(f"{self.section}-a{event['seq']}")
            settled, tail = self.streaming.start(text)
            return self._append(streaming_answer(self.streaming.element_id, settled, tail))
        swaps = self.streaming.add(text)
        return "".join(oob(swap.target, swap.strategy, swap.html) for swap in swaps)

    def _assistant_message(self, event: dict[str, Any]) -> str:
        text = str(event.get("text") or "")
        final = bool(event.get("final"))
        if self.streaming is None and not text and not final:
            return ""
        rendered = render_markdown(text)
        if self.streaming is None:
            element = f"{self.section}-a{event['seq']}"
            html = self._append(_render("_answer.html", id=element, body=mark_safe(rendered)))
        else:
            element = self.streaming.element_id
            html = oob(f"#{element}-text", "innerHTML", rendered)
        self.streaming = None
        if final:
            self.final_bubble = element
            html += announce(unescape(strip_tags(rendered)))  # announce escapes it once
        return html

    def _tool_call(self, event: dict[str, Any]) -> str:
        self.streaming = None
        element = self._tool_id(event)
        self.tool_arguments[element] = event.get("arguments")
        return self._append(
            tool_step(element, str(event.get("name", "")), event.get("arguments"), None, None)
        )

    def _tool_result(self, event: dict[str, Any]) -> str:
        element = self._tool_id(event)
        sub = subagents.discard(self.subagents.get(element))  # if it had not finished
        return tool_step(
            element,
            str(event.get("name", "")),
            self.tool_arguments.get(element),
            str(event.get("content", "")),
            bool(event.get("ok")),
            subagent=sub,
            attachments=event.get("attachments"),
            swap_oob=True,
        )

    def _tool_progress(self, event: dict[str, Any]) -> str:
        """An MCP tool's progress, beside its step's state while it runs."""
        text = tool_progress(event.get("progress"), event.get("total"), event.get("message"))
        return oob(f"#{self._tool_id(event)}-progress", "innerHTML", escape(text))

    def _tool_approval_requested(self, event: dict[str, Any]) -> str:
        self.awaiting.append({"id": event.get("id", ""), "name": event.get("name", "")})
        return tool_status(self._tool_id(event), ok=None, waiting="approval")

    def _tool_approval_given(self, event: dict[str, Any]) -> str:
        """The user answered: an approved call runs now; a declined one gets its error."""
        self.awaiting = [call for call in self.awaiting if call["id"] != event.get("id")]
        return tool_status(self._tool_id(event), ok=None)

    def _subagent(self, event: dict[str, Any]) -> str:
        """A subagent at work in a `delegate` step: its panel, redrawn."""
        element = self._tool_id({"id": event.get("call_id", "")})
        sub = subagents.fold(self.subagents.get(element), event)
        if sub is None:
            return ""
        self.subagents[element] = sub
        return subagent_panel(element, sub, swap_oob=True)

    _subagent_started = _subagent_step = _subagent_progress = _subagent_finished = _subagent

    def _tool_id(self, event: dict[str, Any]) -> str:
        call_id = "".join(c for c in str(event.get("id", "")) if c.isalnum() or c in "-_")
        return f"{self.section}-t{call_id}"

    def _system_notice(self, event: dict[str, Any]) -> str:
        # An answer being streamed goes on in its own bubble (above the notice): its end
        # fills that bubble, not a second one repeating its start.
        self.last_notice = f"{self.section}-s{event['seq']}"
        text = str(event.get("text", ""))
        return self._append(system_message(self.last_notice, event, text)) + announce(text)

    def _conversation_titled(self, event: dict[str, Any]) -> str:
        """The conversation's model named it: the header, the sidebar and the tab."""
        conversation = {"id": self.conversation_id, "title": str(event.get("title", ""))}
        if not self.conversation_id:
            return ""
        return _render("_title.html", conversation=conversation, swap_oob=True)

    def _run_paused(self, event: dict[str, Any]) -> str:
        self.status = "paused"
        reason = str(event.get("reason", ""))
        if reason == APPROVAL and self.awaiting and self.last_notice is not None:
            actions = approval_actions(self.run_id, self.awaiting)
            html = self._clear_actions() + oob(f"#{self.last_notice}-actions", "innerHTML", actions)
        else:
            html = self._offer_actions(paused=True, reason=reason)
        return html + stop_controls(None, swap_oob=True)

    def _run_finished(self, event: dict[str, Any]) -> str:
        reason = str(event.get("reason", ""))
        self.status = "finished"
        html = ""
        if self.final_bubble is not None:
            foot = answer_foot(reason, event, self.run_id)
            html += oob(f"#{self.final_bubble}-foot", "innerHTML", foot)
        html += self._offer_actions(paused=False, reason=reason, problem=event.get("problem"))
        return html + stop_controls(None, swap_oob=True)

    def _clear_actions(self) -> str:
        """Take every button off the run's System messages (those of a page rendered
        from history too, whose elements are named after their messages)."""
        return oob(f"#{self.section} .system-actions", "innerHTML", "")

    def _offer_actions(self, *, paused: bool, reason: str, problem: str | None = None) -> str:
        """Put Continue (and Stop) on the run's last System message, and only there."""
        html = self._clear_actions()
        if self.last_notice is None or reason == "completed":
            return html
        actions = run_actions(self.run_id, paused=paused, reason=reason, problem=problem)
        return html + oob(f"#{self.last_notice}-actions", "innerHTML", actions)
