"""A run as the live stream shows it: each event of the run becomes htmx out-of-band
swaps (the same partials the page renders from saved rows), and the gauges move (the
context gauge with each `context.used`: a page's socket replays a run's saved events,
so a reload draws it again as it was)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import unescape
from typing import Any

from django.utils.html import escape, strip_tags
from django.utils.safestring import mark_safe

from agents.events import APPROVAL, EventType
from chat.fragments import (
    announce,
    answer_foot,
    approval_actions,
    history_stale,
    new_turn,
    oob,
    run_actions,
    run_section,
    stop_controls,
    streaming_answer,
    system_message,
    typing,
)
from chat.gauges import gauge_counters
from chat.notices import compaction_metadata
from chat.partials import render_partial
from chat.run_gauges import RunGauges
from chat.streaming import StreamingAnswer
from chat.subagent_panel import subagent_panel
from chat.tool_steps import tool_progress, tool_status, tool_step
from markup.markdown import render_markdown
from runs import subagents

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
    final_text: str = ""  # the Markdown of the final answer (its foot's Copy copies it)
    last_notice: str | None = None
    tool_arguments: dict[str, Any] = field(default_factory=dict)
    subagents: dict[str, dict[str, Any]] = field(default_factory=dict)  # by step element
    awaiting: list[dict[str, Any]] = field(default_factory=list)  # calls that wait for approval
    gauges: RunGauges = field(default_factory=RunGauges)
    status: str = "running"
    working: bool = False  # the typing indicator shows: the Oracle is at work, unseen
    # For a run the page did not have: the question it answers (a new turn starts with
    # it), or that it reshapes the history (the page draws it again).
    asked: Any = None
    reshapes: bool = False

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
        self.gauges.counters = gauge_counters(counters)

    def gauges_if_changed(self, *, always: bool = False) -> str:
        """What changed in the gauges since the last ones sent (`RunGauges.if_changed`)."""
        streamed = len(self.streaming.text) if self.streaming is not None else 0
        return self.gauges.if_changed(self.status, streamed, always=always)

    def _append(self, html: str) -> str:
        return oob(f"#{self.section}", "beforeend", html)

    def _run_started(self, event: dict[str, Any]) -> str:
        self.gauges = RunGauges(
            limits=dict(event.get("config") or {}), counters=self.gauges.counters
        )
        self.status = "running"
        if self.asked is not None:
            start = new_turn(self.asked, self.run_id)
        else:
            start = run_section(self.run_id)
        redraw = history_stale(self.run_id) if self.reshapes else ""
        return (
            redraw
            + oob("#messages", "beforeend", start)
            + stop_controls(self.run_id, swap_oob=True)
        )

    def _run_resumed(self, event: dict[str, Any]) -> str:
        self.status = "running"
        gauges = self.gauges
        gauges.limits = dict(event.get("config") or gauges.limits)
        gauges.before_round = gauge_counters(event.get("before_round") or {})
        gauges.round_number = int(event.get("round") or gauges.round_number)
        cleared = self._clear_actions()
        note = render_partial("_round_divider.html", round=event.get("round", ""))
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
            answer = {"id": element, "body": mark_safe(rendered)}  # its foot comes at the end
            html = self._append(render_partial("_answer.html", answer=answer))
        else:
            element = self.streaming.element_id
            html = oob(f"#{element}-text", "innerHTML", rendered)
        self.streaming = None
        if final:
            self.final_bubble = element
            self.final_text = text
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
            not_run=str(event.get("not_run") or ""),
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
        return self._notice(event, event)

    def _notice(self, event: dict[str, Any], metadata: dict[str, Any]) -> str:
        """A System message, at the end of the run's section (and read out)."""
        # An answer being streamed goes on in its own bubble (above the notice): its end
        # fills that bubble, not a second one repeating its start.
        self.last_notice = f"{self.section}-s{event['seq']}"
        text = str(event.get("text", ""))
        return self._append(system_message(self.last_notice, metadata, text)) + announce(text)

    def _context_used(self, event: dict[str, Any]) -> str:
        """The prompt of the call about to be made, against the model's window: the
        context gauge (drawn with the others, as the batch ends)."""
        self.gauges.context = {
            "prompt_tokens": int(event.get("prompt_tokens") or 0),
            "window": int(event.get("window") or 0),
        }
        return ""

    def _context_compacted(self, event: dict[str, Any]) -> str:
        """The request was shortened to fit the window: a System message as the page
        draws its row, with the summary sent to the model (if one was made) to open."""
        return self._notice(event, compaction_metadata(event))

    def _conversation_titled(self, event: dict[str, Any]) -> str:
        """The conversation's model named it: the header, the sidebar and the tab."""
        conversation = {"id": self.conversation_id, "title": str(event.get("title", ""))}
        if not self.conversation_id:
            return ""
        return render_partial("_title.html", conversation=conversation, swap_oob=True)

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
            foot = answer_foot(
                reason, event, self.run_id, self.final_text, metric=event.get("metric"),
                instructions=str(event.get("instructions") or ""),
            )  # fmt: skip
            html += oob(f"#{self.final_bubble}-foot", "innerHTML", foot)
        html += self._offer_actions(paused=False, reason=reason, problem=event.get("problem"))
        return html + stop_controls(None, swap_oob=True)

    def _clear_actions(self) -> str:
        """Take every button off the run's System messages (those of a page rendered
        from history too, whose elements are named after their messages): none when
        the run has said nothing (a page asked to swap into nothing logs an error)."""
        if self.last_notice is None:  # the view is fed every event of its run
            return ""
        return oob(f"#{self.section} .system-actions", "innerHTML", "")

    def _offer_actions(self, *, paused: bool, reason: str, problem: str | None = None) -> str:
        """Put Continue (and Stop) on the run's last System message, and only there."""
        html = self._clear_actions()
        if self.last_notice is None or reason == "completed":
            return html
        actions = run_actions(self.run_id, paused=paused, reason=reason, problem=problem)
        return html + oob(f"#{self.last_notice}-actions", "innerHTML", actions)
