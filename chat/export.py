"""A conversation to take away: Markdown to read, JSON to process (the API's shapes)."""

from __future__ import annotations

import json
import re
from uuid import UUID

from django.http import HttpResponse
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from accounts.http import AuthenticatedHttpRequest
from agents import wording
from agents.state import Metric
from agents.wording import reason_label
from chat import selectors
from chat.api import conversation_json, message_json, run_json
from chat.models import Conversation, Message, Role, Run


@require_GET
def markdown(request: AuthenticatedHttpRequest, conversation_id: UUID) -> HttpResponse:
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    text = conversation_markdown(conversation)
    return _download(text, "text/markdown; charset=utf-8", _filename(conversation, "md"))


@require_GET
def as_json(request: AuthenticatedHttpRequest, conversation_id: UUID) -> HttpResponse:
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    body = {
        "conversation": conversation_json(conversation),
        "messages": [message_json(m) for m in selectors.message_list(conversation=conversation)],
        "runs": [run_json(run) for run in selectors.run_list(conversation=conversation)],
    }
    text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    return _download(text, "application/json; charset=utf-8", _filename(conversation, "json"))


def _download(text: str, content_type: str, filename: str) -> HttpResponse:
    disposition = content_disposition_header(as_attachment=True, filename=filename)
    return HttpResponse(
        text, content_type=content_type, headers={"Content-Disposition": disposition}
    )


def _filename(conversation: Conversation, extension: str) -> str:
    return f"{slugify(conversation.title)[:80].strip('-') or 'conversation'}.{extension}"


def conversation_markdown(conversation: Conversation) -> str:
    """The title, then each message in order; after each run's messages, what ended it
    and what it used. Tool steps are collapsed; System messages are quotes."""
    runs = {run.pk: run for run in selectors.run_list(conversation=conversation)}
    exported = timezone.localtime().strftime("%Y-%m-%d %H:%M %Z")
    parts = [
        f"# {' '.join((conversation.title or 'New conversation').split())}",
        f"*Exported from Oracle on {exported}.*",
    ]
    shown: Run | None = None  # the run whose messages come now
    for message in selectors.message_list(conversation=conversation):
        run = runs.get(message.run_id) if message.run_id else None
        if shown is not None and run is not shown:
            parts.append(_run_summary(shown))
        shown = run
        part = _message(message)
        if part:
            parts.append(part)
    if shown is not None:
        parts.append(_run_summary(shown))
    return "\n\n".join(parts) + "\n"


def _message(message: Message) -> str:
    meta = message.metadata or {}
    if message.role == Role.USER:
        return f"## You\n\n{message.content}"
    if message.role == Role.ASSISTANT:
        # A step that only called tools has no text: its tool steps follow.
        return f"## Oracle\n\n{message.content}" if message.content else ""
    if message.role == Role.TOOL:
        failed = "" if meta.get("ok", True) else " (failed)"
        arguments = json.dumps(meta.get("arguments"), indent=2, ensure_ascii=False)
        return (
            f"<details>\n<summary>Tool: {meta.get('name', 'tool')}{failed}</summary>\n\n"
            f"Arguments:\n\n{_fenced(arguments, 'json')}\n\n"
            f"Result:\n\n{_fenced(message.content)}\n\n</details>"
        )
    lines = message.content.splitlines() or [""]
    lines[0] = f"**System:** {lines[0]}"
    return "\n".join(f"> {line}".rstrip() for line in lines)


def _fenced(text: str, language: str = "") -> str:
    """A code block no backticks inside can end early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _run_summary(run: Run) -> str:
    reason = run.reason or run.status
    label = reason_label(reason)
    ended = label if label.lower() == reason else f"{label} ({reason})"
    if run.failure_class:
        ended += f", {run.failure_class}"
    iterations, tool_calls = run.iterations, run.tool_calls
    usage = [
        f"{iterations:,} iteration{'' if iterations == 1 else 's'}",
        f"{tool_calls:,} tool call{'' if tool_calls == 1 else 's'}",
        f"{run.tokens:,} tokens",
        wording.number(Metric.COST, run.cost_usd),
        f"{wording.number(Metric.TIME, run.elapsed_ms / 1000)} s",
    ]
    return f"**Run:** {ended} · {' · '.join(usage)}"
