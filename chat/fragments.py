"""HTML for the conversation: each message kind once, used both for the page (from
saved `Message` rows) and for the live stream (from run events, as htmx
out-of-band swaps sent over the WebSocket).

Everything a model, a tool or a user wrote goes through `render_markdown`
(assistant text) or is escaped (everything else).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.urls import reverse
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from agents import wording
from agents.state import Metric
from chat.rendering import render_markdown

REASON_LABELS = {
    "completed": "Completed",
    "cancelled": "Stopped by you",
    "max_iterations": "Iteration limit",
    "token_budget": "Token budget",
    "timeout": "Time limit",
    "cost_budget": "Cost limit",
    "no_progress": "No progress",
    "tool_errors": "Tool errors",
    "tool_budget": "Tool-call budget",
    "tool_budget_violation": "Tool-call budget",
    "turn_budget_exhausted": "Extensions used up",
    "provider_error": "Model unreachable",
    "interrupted": "Interrupted",
}


def reason_badge(reason: str) -> SafeString:
    if not reason or reason == "completed":
        return mark_safe("")
    return format_html(
        '<span class="badge badge-{}" title="Termination reason: {}">{}</span>',
        reason,
        reason,
        REASON_LABELS.get(reason, reason),
    )


def user_message(content: str) -> SafeString:
    return format_html(
        '<article class="msg msg-user"><div class="msg-body">{}</div></article>',
        mark_safe(render_markdown(content)),  # sanitised by render_markdown
    )


def assistant_message(
    element_id: str, content: str, reason: str = "", *, final: bool, streamed: str = ""
) -> SafeString:
    """An answer: `content` rendered as Markdown, or, while it streams, `streamed` as text."""
    body = render_markdown(content) if final or content else escape(streamed)
    return format_html(
        '<article class="msg msg-assistant" id="{}"><div class="msg-body" id="{}-text">{}</div>'
        '<div class="msg-foot" id="{}-foot">{}</div></article>',
        element_id,
        element_id,
        mark_safe(body),
        element_id,
        reason_badge(reason),
    )


def tool_step(
    element_id: str,
    name: str,
    arguments: Any,
    result: str | None,
    ok: bool | None,
    *,
    swap_oob: bool = False,
) -> SafeString:
    arguments_text = json.dumps(arguments, ensure_ascii=False, indent=1) if arguments else "{}"
    return format_html(
        '<details class="tool-step" id="{}"{}><summary><span class="tool-icon" aria-hidden="true">'
        '⚙</span> <code>{}</code> {}</summary><div class="tool-detail">'
        '<div class="tool-label">Arguments</div><pre>{}</pre>'
        '<div class="tool-label">Result</div><div id="{}-result">{}</div></div></details>',
        element_id,
        mark_safe(' hx-swap-oob="outerHTML"' if swap_oob else ""),
        name,
        _tool_status(ok),
        arguments_text,
        element_id,
        _tool_result(result, ok),
    )


def _tool_status(ok: bool | None) -> SafeString:
    if ok is None:
        return mark_safe('<span class="tool-status running">running…</span>')
    if ok:
        return mark_safe('<span class="tool-status ok">done</span>')
    return mark_safe('<span class="tool-status failed">error</span>')


def _tool_result(result: str | None, ok: bool | None) -> SafeString:
    if result is None:
        return mark_safe('<p class="muted">Running…</p>')
    return format_html('<pre class="tool-output {}">{}</pre>', "ok" if ok else "failed", result)


def _number(metric: str, value: Any) -> str:
    """A figure as the System messages write it ('$0.045', '10.3', '1,500')."""
    if not isinstance(value, int | float):
        return str(value)
    return wording.number(metric, value) if metric in _METRICS else f"{value:,}"


_METRICS = {metric.value for metric in Metric}
_GAUGE_METRICS = {"cost_usd": Metric.COST, "elapsed_s": Metric.TIME}


def system_message(
    element_id: str, metadata: dict[str, Any], text: str, actions: str = ""
) -> SafeString:
    severity = str(metadata.get("severity") or "info")
    figures = mark_safe("")
    if metadata.get("metric") and metadata.get("limit") is not None:
        figures = format_html(
            '<span class="figures">{}: {} of {}</span>',
            str(metadata["metric"]).replace("_", " "),
            _number(str(metadata["metric"]), metadata.get("value")),
            _number(str(metadata["metric"]), metadata.get("limit")),
        )
    return format_html(
        '<aside class="msg msg-system severity-{}" id="{}" role="status">'
        '<span class="system-label">System</span> <span class="severity">{}</span> {}'
        '<p class="system-text">{}</p><div class="system-actions" id="{}-actions">{}</div></aside>',
        severity,
        element_id,
        severity,
        figures,
        text,
        element_id,
        mark_safe(actions),  # built by run_actions from format_html
    )


def run_actions(run_id: str, *, paused: bool, reason: str) -> SafeString:
    """Continue (and Stop for a paused run) buttons, posting to the run's API."""
    label = "Resume" if reason == "interrupted" else "Continue"
    buttons = [
        format_html(
            '<button type="button" class="primary" hx-post="{}" hx-swap="none">{}</button>',
            reverse("api-run-continue", args=[run_id]),
            label,
        )
    ]
    if paused:
        buttons.append(
            format_html(
                '<button type="button" hx-post="{}" hx-swap="none">Stop</button>',
                reverse("api-run-cancel", args=[run_id]),
            )
        )
    return format_html_join("", "{}", ((b,) for b in buttons))


def stop_controls(run_id: str | None, *, swap_oob: bool = False) -> str:
    """The composer's Stop button while `run_id` works; empty when no run does."""
    attributes = ' hx-swap-oob="true"' if swap_oob else ""
    if run_id is None:
        return f'<div id="run-controls" class="run-controls"{attributes}></div>'
    return str(
        format_html(
            '<div id="run-controls" class="run-controls"{}>'
            '<button type="button" class="stop" hx-post="{}" hx-swap="none">Stop</button></div>',
            mark_safe(attributes),
            reverse("api-run-cancel", args=[run_id]),
        )
    )


def oob(target: str, strategy: str, html: str) -> str:
    """An out-of-band swap of `html` into `target` (a CSS id selector)."""
    return f'<div hx-swap-oob="{strategy}:{target}">{html}</div>'


def gauges(
    counters: dict[str, Any], limits: dict[str, Any], *, status: str, swap_oob: bool = False
) -> SafeString:
    rows = []
    for key, label, limit_key in (
        ("iterations", "Iterations", "max_iterations"),
        ("tool_calls", "Tool calls", "max_tool_calls_per_turn"),
        ("tokens", "Tokens", "token_budget"),
        ("cost_usd", "Cost (USD)", "max_cost_usd"),
        ("elapsed_s", "Seconds", "timeout_seconds"),
    ):
        value = counters.get(key, 0) or 0
        limit = limits.get(limit_key)
        if key == "iterations" and limits.get("unlimited_iterations"):
            limit = None
        percent = min(100, round(100 * value / limit)) if limit else 0
        rows.append(
            format_html(
                '<div class="gauge"><span class="gauge-label">{}</span>'
                '<meter min="0" max="100" low="70" high="90" optimum="0" value="{}"></meter>'
                '<span class="gauge-figures">{} / {}</span></div>',
                label,
                percent,
                _number(_GAUGE_METRICS.get(key, Metric.ITERATIONS), value),
                _number(_GAUGE_METRICS.get(key, Metric.ITERATIONS), limit) if limit else "∞",
            )
        )
    return format_html(
        '<div id="gauges" class="gauges"{} aria-label="Run counters" data-status="{}">'
        '<span class="run-status">{}</span>{}</div>',
        mark_safe(' hx-swap-oob="outerHTML"' if swap_oob else ""),
        status,
        status,
        format_html_join("", "{}", ((row,) for row in rows)),
    )


@dataclass
class RunView:
    """Turns one run's events, in order, into out-of-band fragments for the page.

    A view fed every event from the first reproduces the page exactly, so a
    reconnecting browser is brought up to date by replaying the saved events
    through a fresh view and sending only those after the browser's last seq.
    """

    run_id: str
    rendered: int = 0  # the seq of the last event rendered
    bubble: str | None = None
    final_bubble: str | None = None
    last_notice: str | None = None
    action_ids: list[str] = field(default_factory=list)
    tool_arguments: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, Any] = field(default_factory=dict)
    status: str = "running"
    _gauges_shown: tuple[Any, ...] = ()

    @property
    def section(self) -> str:
        return f"run-{self.run_id}"

    def render(self, event: dict[str, Any]) -> str:
        handler = getattr(self, "_" + event["type"].replace(".", "_"), None)
        self._count(event)
        return handler(event) if handler else ""

    def _count(self, event: dict[str, Any]) -> None:
        if event["type"] == "run.finished":
            self.set_counters(event)

    def set_counters(self, counters: dict[str, Any]) -> None:
        """The run's totals so far (from the worker's checkpoints, or its final event)."""
        self.counters = {
            "iterations": counters.get("iterations", 0),
            "tool_calls": counters.get("tool_calls", 0),
            "tokens": counters.get("tokens", 0),
            "cost_usd": counters.get("cost_usd", 0.0),
            "elapsed_s": round((counters.get("elapsed_ms") or 0) / 1000),
        }

    def gauges(self) -> str:
        return gauges(self.counters, self.limits, status=self.status, swap_oob=True)

    def gauges_if_changed(self) -> str:
        """The gauges, or "" when they would read as the last ones sent (most batches
        are a few words of text, which move no counter)."""
        shown = (self.status, tuple(self.counters.values()), tuple(self.limits.items()))
        if shown == self._gauges_shown:
            return ""
        self._gauges_shown = shown
        return self.gauges()

    def _append(self, html: str) -> str:
        return oob(f"#{self.section}", "beforeend", html)

    def _run_started(self, event: dict[str, Any]) -> str:
        self.limits = dict(event.get("config") or {})
        self.status = "running"
        section = format_html('<section class="run" id="{}"></section>', self.section)
        return oob("#messages", "beforeend", section) + stop_controls(self.run_id, swap_oob=True)

    def _run_resumed(self, event: dict[str, Any]) -> str:
        self.status = "running"
        cleared = "".join(oob(f"#{aid}", "innerHTML", "") for aid in self.action_ids)
        self.action_ids.clear()
        note = format_html(
            '<p class="round-divider">Continuing (round {})…</p>', event.get("round", "")
        )
        return cleared + self._append(note) + stop_controls(self.run_id, swap_oob=True)

    def _assistant_delta(self, event: dict[str, Any]) -> str:
        text = str(event.get("text", ""))
        if self.bubble is None:
            self.bubble = f"{self.section}-a{event['seq']}"
            return self._append(assistant_message(self.bubble, "", final=False, streamed=text))
        return oob(f"#{self.bubble}-text", "beforeend", escape(text))

    def _assistant_message(self, event: dict[str, Any]) -> str:
        text = str(event.get("text") or "")
        final = bool(event.get("final"))
        if self.bubble is None:
            if not text and not final:
                return ""
            self.bubble = f"{self.section}-a{event['seq']}"
            html = self._append(assistant_message(self.bubble, text, final=True))
        else:
            html = oob(f"#{self.bubble}-text", "innerHTML", render_markdown(text))
        if final:
            self.final_bubble = self.bubble
        self.bubble = None
        return html

    def _tool_call(self, event: dict[str, Any]) -> str:
        self.bubble = None
        element = self._tool_id(event)
        self.tool_arguments[element] = event.get("arguments")
        return self._append(
            tool_step(element, str(event.get("name", "")), event.get("arguments"), None, None)
        )

    def _tool_result(self, event: dict[str, Any]) -> str:
        element = self._tool_id(event)
        return tool_step(
            element,
            str(event.get("name", "")),
            self.tool_arguments.get(element),
            str(event.get("content", "")),
            bool(event.get("ok")),
            swap_oob=True,
        )

    def _tool_id(self, event: dict[str, Any]) -> str:
        call_id = "".join(c for c in str(event.get("id", "")) if c.isalnum() or c in "-_")
        return f"{self.section}-t{call_id}"

    def _system_notice(self, event: dict[str, Any]) -> str:
        self.bubble = None
        self.last_notice = f"{self.section}-s{event['seq']}"
        return self._append(system_message(self.last_notice, event, str(event.get("text", ""))))

    def _run_paused(self, event: dict[str, Any]) -> str:
        self.status = "paused"
        actions = self._offer_actions(paused=True, reason=str(event.get("reason", "")))
        return actions + stop_controls(None, swap_oob=True)

    def _run_finished(self, event: dict[str, Any]) -> str:
        reason = str(event.get("reason", ""))
        self.status = "finished"
        html = ""
        if self.final_bubble is not None:
            html += oob(f"#{self.final_bubble}-foot", "innerHTML", reason_badge(reason))
        if reason != "completed":
            html += self._offer_actions(paused=False, reason=reason)
        return html + stop_controls(None, swap_oob=True)

    def _offer_actions(self, *, paused: bool, reason: str) -> str:
        """Put Continue (and Stop) on the run's last System message."""
        if self.last_notice is None or reason == "completed":
            return ""
        container = f"{self.last_notice}-actions"
        self.action_ids.append(container)
        return oob(
            f"#{container}", "innerHTML", run_actions(self.run_id, paused=paused, reason=reason)
        )
