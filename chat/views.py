"""The chat pages: conversation list, a conversation with its live stream, and the
forms behind them. Each works as a plain form post and, with htmx, in place."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages as flash
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from accounts.http import AuthenticatedHttpRequest
from agents.skills import DEFAULT_SKILL, Skill, UnknownSkillError, skill_named, skills
from chat import fragments, selectors, services
from chat.attachments import attach_context
from chat.history import history_turns
from chat.models import Conversation, Run, RunStatus


def _model_picker(user: Any, conversation: Conversation | None) -> dict[str, Any]:
    """The models this conversation may use, the one it uses, and whether that is the
    built-in offline model."""
    from runs.engine import user_config
    from settings_ui.policy import OFFLINE_MODEL_LABEL, allowed_models, effective_model

    default = effective_model(user_config(user)[0])  # the user's choice, else the server's
    picked = conversation.model if conversation else ""
    used = picked or default
    options = [("", f"Default ({default or OFFLINE_MODEL_LABEL})")]
    options += [(model, model) for model in allowed_models() if model and model != default]
    return {"options": options, "picked": picked, "used": used, "offline": not used}


def _page(
    request: AuthenticatedHttpRequest, conversation: Conversation | None, **extra: Any
) -> HttpResponse:
    models = _model_picker(request.user, conversation)
    context = {
        "sidebar": selectors.sidebar_get(
            user=request.user,
            query=request.GET.get("q", ""),
            time_zone=request.COOKIES.get(selectors.TIME_ZONE_COOKIE),
        ),
        "conversation": conversation,
        "skill": _skill_of(conversation),
        "models": models,
        "offline_model": models["offline"],
        "max_chars": settings.ORACLE_MAX_MESSAGE_CHARS,
        "attach": attach_context(),
        "busy": services.BUSY,
        **extra,
    }
    return render(request, "chat/conversation.html", context)


def _skill_of(conversation: Conversation | None) -> Skill | None:
    """The skill the conversation started with (None for a name no skill has now)."""
    if conversation is None:
        return None
    try:
        return skill_named(conversation.skill)
    except UnknownSkillError:
        return None


# What the empty start page suggests asking: each shows something the Oracle does,
# the offline model included (documents, arithmetic, the time, its own limits).
SUGGESTIONS = (
    "Summarise my documents",
    "What is 15% of 391?",
    "What time is it in Tokyo?",
    "How do I change the iteration limit?",
)


@require_GET
def home(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _page(
        request, None, skills=skills(), chosen_skill=DEFAULT_SKILL.name, suggestions=SUGGESTIONS
    )


@require_POST
def conversation_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Start a conversation with its first message. Without one there is nothing to
    keep: the first page's composer is where a new conversation starts."""
    content = request.POST.get("content", "")
    if not content.strip():
        return redirect("home")
    with transaction.atomic():
        try:
            conversation = services.conversation_create(
                owner=request.user, skill=request.POST.get("skill", DEFAULT_SKILL.name)
            )
            services.message_post(
                conversation=conversation,
                content=content,
                documents=request.POST.getlist("documents"),
            )
        except services.InvalidInput as problem:
            transaction.set_rollback(True)
            flash.error(request, " ".join(m for ms in problem.errors.values() for m in ms))
            return redirect("home")
    return redirect("conversation", conversation_id=conversation.id)


@require_GET
def conversation_page(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    active = conversation.runs.filter(status__in=services.ACTIVE).first()
    latest = active or conversation.runs.order_by("-created_at").first()
    busy = services.busy_state(active)
    return _page(
        request,
        conversation,
        turns=history_turns(conversation, active),
        # The page names the run it shows and the last event it holds: a Continue
        # streams only what comes after (the events before are on the page already).
        shown_run=latest,
        shown_seq=0 if active else (latest.last_event_seq if latest else 0),
        # A run whose worker went silent, shown before a worker's sweeper records it
        # (a page only reads): the notice goes once the run's events move past it.
        lost=active if active is not None and active.is_lost(timezone.now()) else None,
        stoppable=_stoppable(active),
        busy_now=busy,
        busy_note=services.BUSY.get(busy, ""),  # what the composer says before a try
        totals=_totals(conversation),
    )


@require_GET
def conversation_totals(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    """What the conversation has used in all (the page asks again when a run ends)."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    context = {"conversation": conversation, "totals": _totals(conversation)}
    return render(request, "chat/_totals.html", context)


def _totals(conversation: Conversation) -> dict[str, Any]:
    totals = selectors.conversation_usage(conversation=conversation)
    return {"runs": totals["runs"], "text": "In all: " + fragments.usage_text(totals)}


@require_POST
def conversation_post(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    """The composer: add the user's message, start a run, show both at once."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    content = request.POST.get("content", "")
    title_before = conversation.title
    documents = request.POST.getlist("documents")
    try:
        message, run = services.message_post(
            conversation=conversation, content=content, documents=documents
        )
    except (services.InvalidInput, services.RunConflict) as problem:
        text = (
            " ".join(m for ms in problem.errors.values() for m in ms)
            if isinstance(problem, services.InvalidInput)
            else str(problem)
        )
        if not request.htmx:
            flash.error(request, text)
            return redirect("conversation", conversation_id=conversation.id)
        # Refused: the page says why, and keeps the message in the composer (chat.js
        # empties it only when this error is empty). A 200: a refusal the page shows
        # is no error in its console.
        return HttpResponse(fragments.oob("#composer-error", "innerHTML", escape(text)))
    if not request.htmx:
        return redirect("conversation", conversation_id=conversation.id)
    # The worker may have started the run, and the socket shown it, before this reply
    # arrives (under load): the page keeps what the socket showed (chat.js).
    run_id = str(run.pk)
    html = (
        fragments.oob("#messages", "beforeend", fragments.new_turn(message, run_id))
        + fragments.oob("#composer-error", "innerHTML", "")
        + fragments.stop_controls(run_id, swap_oob=True, posted_run=run_id)
        + fragments.typing(show=True, posted_run=run_id)
    )
    if conversation.title != title_before:  # the first message named it
        html += render_to_string(
            "chat/_title.html", {"conversation": conversation, "swap_oob": True}, request
        )
    return HttpResponse(html)


@require_POST
def conversation_rename(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    """The header's title field: the new title saved, or why not said beside the field,
    which gets the title back as it was."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    errors: list[str] = []
    try:
        services.conversation_rename(conversation=conversation, title=request.POST.get("title", ""))
    except services.InvalidInput as problem:
        errors = problem.errors["title"]
        if not request.htmx:
            flash.error(request, " ".join(errors))
    if not request.htmx:
        return redirect("conversation", conversation_id=conversation.id)
    # A refusal is a 200 too: the page shows it, and it is no error in its console.
    context = {"conversation": conversation, "swap_oob": True, "title_errors": errors}
    return render(request, "chat/_title.html", context)


@require_POST
def conversation_model(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    """The model picker: this conversation's next runs use the model picked."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    try:
        services.conversation_set_model(conversation=conversation, model=request.POST.get("model"))
    except services.InvalidInput as problem:
        if request.htmx:
            return HttpResponse(" ".join(problem.errors["model"]), status=400)
        flash.error(request, " ".join(problem.errors["model"]))
        return HttpResponse(status=400)
    if request.htmx:
        return HttpResponse(status=204)
    return redirect("conversation", conversation_id=conversation.id)


@require_POST
def run_regenerate(request: AuthenticatedHttpRequest, run_id: str) -> HttpResponse:
    """Answer the run's message again; the page then shows the new version streaming."""
    run = selectors.run_get(user=request.user, run_id=run_id)
    try:
        services.run_regenerate(run=run)
    except services.RunConflict as problem:
        flash.error(request, str(problem))
    return _to_conversation(request, run.conversation)


def _to_conversation(request: AuthenticatedHttpRequest, conversation: Conversation) -> HttpResponse:
    """Back to the conversation's page: a redirect, or htmx's for a request it made."""
    url = reverse("conversation", args=[conversation.id])
    if request.htmx:
        return HttpResponseClientRedirect(url, status=204)
    return redirect(url)


@require_POST
def conversation_edit(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    """Send a message again, as edited: the conversation branches there, and the
    earlier version stays browsable."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    message = conversation.messages.filter(pk=_int(request.POST.get("message")) or 0).first()
    try:
        if message is None:
            raise services.RunConflict("That message is not in this conversation.")
        services.message_edit(message=message, content=request.POST.get("content", ""))
    except (services.InvalidInput, services.RunConflict) as problem:
        text = (
            " ".join(problem.errors["content"])
            if isinstance(problem, services.InvalidInput)
            else str(problem)
        )
        if request.htmx:  # the edit box stays open with what was typed, and says why
            return HttpResponse(escape(text))
        flash.error(request, text)
    return _to_conversation(request, conversation)


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


@require_POST
def conversation_delete(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    services.conversation_delete(conversation=conversation)
    return redirect("home")


def _stoppable(run: Run | None) -> str | None:
    """The run the composer's Stop stops: a queued or running one."""
    active = run is not None and run.status in (RunStatus.QUEUED, RunStatus.RUNNING)
    return str(run.pk) if run is not None and active else None
