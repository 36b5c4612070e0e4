"""HTML for the conversation: each message kind once, used both for the page (from
saved `Message` rows) and for the live stream (from run events, as htmx
out-of-band swaps sent over the WebSocket).

A partial that holds another includes its template: the `*_context` functions give
the data a template reads (what the page's history composes), the others render it
(what the live stream sends).

Everything a model, a tool or a user wrote goes through `render_markdown`
(assistant text) or is escaped (everything else).
"""

from __future__ import annotations

from typing import Any

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from agents import wording
from agents.endings import SPENDING_CAP
from agents.model import ModelProblem
from agents.state import Metric
from chat.gauges import figure
from chat.models import resumes
from chat.partials import reason_badge, render_partial
from markup.markdown import render_markdown


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


def answer_foot_context(
    reason: str,
    counters: dict[str, Any] | None,
    run_id: str = "",
    source: str = "",
    metric: str | None = None,
    instructions: str = "",
) -> dict[str, Any]:
    """The foot of a run's final answer: reason badge, usage, whether the run worked
    under the user's custom `instructions` (which it shows on demand), Copy (of `source`,
    the Markdown the Oracle wrote) and Regenerate (shown on the last answer only). The
    switch between an answer's versions is the history's."""
    return {
        "badge": reason_badge(reason, metric),
        "usage": usage_text(counters) if counters else "",
        "instructions": instructions,
        "run_id": run_id,
        "source": source,
    }


def answer_foot(
    reason: str,
    counters: dict[str, Any] | None,
    run_id: str = "",
    source: str = "",
    metric: str | None = None,
    instructions: str = "",
) -> SafeString:
    """A final answer's foot, put under it when its run ends (`metric`: the limit it
    ended at, if one)."""
    foot = answer_foot_context(reason, counters, run_id, source, metric, instructions)
    return render_partial("_answer_foot.html", foot=foot)


def typing(*, show: bool, posted_run: str = "") -> str:
    """The indicator that the Oracle is working and has not written anything yet
    (`posted_run`: shown by the reply to a post that started that run, see
    `stop_controls`)."""
    return render_partial("_typing.html", show=show, swap_oob=True, posted_run=posted_run)


def announce(text: str) -> str:
    """Read a finished message out to screen readers (the live stream itself is not)."""
    return oob("#announcer", "innerHTML", escape(text[:1000]))


def user_message_context(message: Any, switch: dict[str, int] | None = None) -> dict[str, Any]:
    """A message the user sent (a `Message`), with the documents it attached, Edit and
    its versions' switch."""
    body = mark_safe(render_markdown(message.content))  # sanitised by render_markdown
    attached = message.metadata.get("documents") or []
    return {"message": message, "body": body, "switch": switch, "attached": attached}


def new_turn(message: Any, run_id: str) -> SafeString:
    """A message just sent, with the (empty) section its run's events go into."""
    return render_partial("_new_turn.html", sent=user_message_context(message), run_id=run_id)


def history_stale(run_id: str) -> SafeString:
    """Tells a page that `run_id` reshapes the conversation's history (chat.js draws
    the page again unless it shows that run already)."""
    return format_html(
        '<div id="history-stale" hx-swap-oob="true" data-run="{}" hidden></div>', run_id
    )


def version_switch_context(number: int, count: int) -> dict[str, int] | None:
    """The "< 2 / 3 >" switch: which version of an answer or a message is in view (none
    for the only version)."""
    return {"number": number, "count": count} if count > 1 else None


def assistant_message_context(
    element_id: str,
    content: str,
    reason: str = "",
    counters: dict[str, Any] | None = None,
    *,
    run_id: str = "",
    metric: str | None = None,
    instructions: str = "",
) -> dict[str, Any]:
    """A saved answer: `content` rendered as Markdown; a run's final answer (`reason`
    given) has its foot (`metric`: the limit it ended at, if one)."""
    foot = (
        answer_foot_context(reason, counters, run_id, content, metric, instructions)
        if reason
        else None
    )
    body = mark_safe(render_markdown(content))  # sanitised by render_markdown
    return {"id": element_id, "body": body, "foot": foot}


def streaming_answer(element_id: str, settled: str, tail: str) -> SafeString:
    """An answer as it streams: its finished Markdown blocks, then the block still
    growing (`chat.streaming`); both are HTML from `render_markdown`."""
    answer = {
        "id": element_id,
        "streaming": True,
        "settled": mark_safe(settled),
        "tail": mark_safe(tail),
    }
    return render_partial("_answer.html", answer=answer)


_SETTINGS_PROBLEMS = {problem.value for problem in ModelProblem if problem.needs_settings}


def system_message_context(
    element_id: str,
    metadata: dict[str, Any],
    text: str,
    actions: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A System message: what the Oracle's limits did, with the figures and what can
    follow (`run_actions_context`). One that says the request was shortened to fit the
    model's context window carries the summary sent in place of the older messages
    (`metadata["context"]`), rendered as an answer is, to open."""
    figures = None
    metric = str(metadata.get("metric") or "")
    if metric and metadata.get("limit") is not None:
        figures = {
            "metric": metric.replace("_", " "),
            "value": figure(metric, metadata.get("value")),
            "limit": figure(metric, metadata.get("limit")),
            "unit": " tokens" if metric == Metric.CONTEXT else "",
        }
    context = metadata.get("context") or {}
    summary = str(context.get("summary") or "") if isinstance(context, dict) else ""
    return {
        "id": element_id,
        "severity": str(metadata.get("severity") or "info"),
        "figures": figures,
        "text": text,
        "summary": mark_safe(render_markdown(summary)) if summary else "",  # sanitised
        "actions": actions,
    }


def system_message(
    element_id: str,
    metadata: dict[str, Any],
    text: str,
    actions: dict[str, Any] | None = None,
) -> SafeString:
    """A System message (`system_message_context`) as the live stream adds it."""
    notice = system_message_context(element_id, metadata, text, actions)
    return render_partial("_system_message.html", notice=notice)


def run_actions_context(
    run_id: str, *, paused: bool, reason: str, problem: str | None = None
) -> dict[str, Any]:
    """Continue (and Stop for a paused run) buttons, posting to the run's API. A model
    that refused the key, the model or the request (`problem`, the notice's kind) would
    refuse a Continue alike: the way to Settings is offered instead. At a used-up daily
    spending cap nothing is offered (a paused run can still be stopped)."""
    if problem == SPENDING_CAP:
        return {"run_id": run_id, "paused": paused, "cap_used_up": True}
    return {
        "run_id": run_id,
        "paused": paused,
        "label": "Resume" if resumes(reason) else "Continue",
        "settings_only": reason == "provider_error" and problem in _SETTINGS_PROBLEMS,
    }


def run_actions(
    run_id: str, *, paused: bool, reason: str, problem: str | None = None
) -> SafeString:
    """The actions (`run_actions_context`) put on a run's last System message live."""
    actions = run_actions_context(run_id, paused=paused, reason=reason, problem=problem)
    return render_partial("_run_actions.html", actions=actions)


def approval_actions(run_id: str, calls: list[dict[str, Any]]) -> SafeString:
    """Approve, Always allow and Deny for each tool call that waits, and Stop."""
    shown = [{"id": str(call.get("id", "")), "name": str(call.get("name", ""))} for call in calls]
    return render_partial("_approval_actions.html", run_id=run_id, calls=shown)


def stop_controls(run_id: str | None, *, swap_oob: bool = False, posted_run: str = "") -> str:
    """The composer's Stop button while `run_id` works; empty when no run does.
    `posted_run`: sent in the reply to the post that started that run, which the page
    leaves out when the socket has told it of the run already (its news is newer)."""
    return render_partial(
        "_stop_controls.html", run_id=run_id, swap_oob=swap_oob, posted_run=posted_run
    )


def run_section(run_id: str) -> SafeString:
    """The (empty) section a run's events go into as the live stream shows them."""
    return render_partial("_run_section.html", section={"run_id": run_id, "messages": []})


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
