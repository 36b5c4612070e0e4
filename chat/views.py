"""The chat pages: conversation list, a conversation with its live stream, and the
forms behind them. Each works as a plain form post and, with htmx, in place."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages as flash
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from chat import fragments, selectors, services
from chat.models import Conversation, Message, Role, Run, RunStatus


def _model_label(user: Any) -> tuple[str, bool]:
    from chat.runner import model_name, user_config

    name = model_name(user_config(user)[0])
    return (name or "Offline model (built in)"), not name


def _page(
    request: AuthenticatedHttpRequest, conversation: Conversation | None, **extra: Any
) -> HttpResponse:
    model, offline = _model_label(request.user)
    context = {
        "conversations": selectors.conversation_list(user=request.user)[:200],
        "conversation": conversation,
        "model_label": model,
        "offline_model": offline,
        "max_chars": settings.ORACLE_MAX_MESSAGE_CHARS,
        **extra,
    }
    return render(request, "chat/conversation.html", context)


@require_GET
def home(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _page(request, None)


@require_POST
def conversation_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Start a conversation with its first message (or an empty one)."""
    content = request.POST.get("content", "")
    conversation = services.conversation_create(owner=request.user)
    if content.strip():
        try:
            services.message_post(conversation=conversation, content=content)
        except services.InvalidInput as problem:
            flash.error(request, " ".join(problem.errors["content"]))
    return redirect("conversation", conversation_id=conversation.id)


@require_GET
def conversation_page(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    services.runs_mark_interrupted()
    active = conversation.runs.filter(status__in=services.ACTIVE).first()
    return _page(
        request,
        conversation,
        history=history_html(conversation, active),
        active_run=active,
        controls=run_controls(active),
    )


@require_POST
def conversation_post(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    """The composer: add the user's message, start a run, show both at once."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    content = request.POST.get("content", "")
    try:
        message, run = services.message_post(conversation=conversation, content=content)
    except (services.InvalidInput, services.RunConflict) as problem:
        text = (
            " ".join(problem.errors.get("content", [str(problem)]))
            if isinstance(problem, services.InvalidInput)
            else str(problem)
        )
        if not request.headers.get("HX-Request"):
            flash.error(request, text)
            return redirect("conversation", conversation_id=conversation.id)
        response = HttpResponse(
            fragments.oob("#composer-error", "innerHTML", format_html("{}", text)), status=200
        )
        return response
    if not request.headers.get("HX-Request"):
        return redirect("conversation", conversation_id=conversation.id)
    html = (
        fragments.oob("#messages", "beforeend", fragments.user_message(message.content))
        + fragments.oob("#composer-error", "innerHTML", "")
        + fragments.stop_controls(str(run.pk), swap_oob=True)
        + f'<textarea id="composer-input" hx-swap-oob="true" name="content" rows="3" '
        f'required maxlength="{settings.ORACLE_MAX_MESSAGE_CHARS}" '
        f'placeholder="Ask the Oracle…" aria-label="Message"></textarea>'
    )
    return HttpResponse(html)


@require_POST
def conversation_rename(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    try:
        services.conversation_rename(conversation=conversation, title=request.POST.get("title", ""))
    except services.InvalidInput as problem:
        flash.error(request, " ".join(problem.errors["title"]))
    return redirect("conversation", conversation_id=conversation.id)


@require_POST
def conversation_delete(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    services.conversation_delete(conversation=conversation)
    return redirect("home")


def run_controls(run: Run | None) -> str:
    """The Stop button of a queued or running run."""
    active = run is not None and run.status in (RunStatus.QUEUED, RunStatus.RUNNING)
    return fragments.stop_controls(str(run.pk) if run is not None and active else None)


def history_html(conversation: Conversation, active: Run | None) -> SafeString:
    """Saved messages, grouped by run. The active run's own messages are left out:
    the WebSocket replays them from its events, so nothing shows twice."""
    latest = conversation.runs.order_by("-created_at").first()
    parts: list[str] = []
    current_run: object = None
    last_system: tuple[Message, str] | None = None
    rows = selectors.message_list(conversation=conversation).select_related("run")
    for message in rows:
        if message.role == Role.USER:
            if current_run is not None:
                parts.append("</section>")
                current_run = None
            parts.append(fragments.user_message(message.content))
            continue
        if active is not None and message.run_id == active.pk:
            continue
        if message.run_id != current_run:
            if current_run is not None:
                parts.append("</section>")
            current_run = message.run_id
            parts.append(f'<section class="run" id="run-{message.run_id}">')
        parts.append(_saved_message(message))
        if message.role == Role.SYSTEM:
            last_system = (message, str(len(parts) - 1))
    if current_run is not None:
        parts.append("</section>")
    if (
        last_system
        and latest
        and latest.status == RunStatus.FINISHED
        and latest == last_system[0].run
    ):
        message, index = last_system
        if latest.reason in services.CONTINUABLE or latest.reason == "interrupted":
            actions = fragments.run_actions(str(latest.pk), paused=False, reason=latest.reason)
            parts[int(index)] = fragments.system_message(
                f"msg-{message.pk}", message.metadata, message.content, actions
            )
    return mark_safe("".join(parts))  # every part is built with format_html


def _saved_message(message: Message) -> str:
    element = f"msg-{message.pk}"
    meta = message.metadata or {}
    if message.role == Role.ASSISTANT:
        return fragments.assistant_message(
            element, message.content, message.termination_reason, final=True
        )
    if message.role == Role.TOOL:
        done = meta.get("status") == "done"
        return fragments.tool_step(
            element,
            str(meta.get("name", "")),
            meta.get("arguments"),
            message.content if done else "Not finished.",
            bool(meta.get("ok")) if done else False,
        )
    return fragments.system_message(element, meta, message.content)
