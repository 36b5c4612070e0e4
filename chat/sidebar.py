"""The sidebar's own requests: the list (search as you type), rename in place, and
delete with its Undo. Each answers htmx with the part of the sidebar it changed.

The page that asks says which conversation it shows (`current`, from `hx-vals`) and
what is being searched (`q`, from the search box), so the list it gets back marks the
open conversation and keeps the search."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib import messages as flash
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from accounts.http import AuthenticatedHttpRequest
from chat import selectors, services
from chat.models import Conversation


def _param(request: AuthenticatedHttpRequest, name: str) -> str:
    return request.POST.get(name) or request.GET.get(name) or ""


def _current(request: AuthenticatedHttpRequest) -> Conversation | None:
    """The conversation open on the page that asked, if it still is one."""
    try:
        return selectors.conversation_get(
            user=request.user, conversation_id=_param(request, "current")
        )
    except Http404:
        return None


def _sidebar(request: AuthenticatedHttpRequest) -> selectors.Sidebar:
    return selectors.sidebar_get(
        user=request.user,
        query=_param(request, "q"),
        time_zone=request.COOKIES.get(selectors.TIME_ZONE_COOKIE),
    )


def _list(request: AuthenticatedHttpRequest, *, undo: bool = False) -> HttpResponse:
    """The list; with `undo`, the Undo toast as well (out of band)."""
    context = {"sidebar": _sidebar(request), "conversation": _current(request), "swap_oob": True}
    html = render_to_string("chat/_sidebar_list.html", context, request)
    if undo:
        html += render_to_string("chat/_sidebar_toast.html", context, request)
    return HttpResponse(html)


def _item(
    request: AuthenticatedHttpRequest, conversation: Conversation, **context: Any
) -> HttpResponse:
    current = _current(request)
    if current is not None and current.pk == conversation.pk:
        current = conversation  # as it is now, renamed
    context = {
        "entry": selectors.SidebarItem(conversation),
        "conversation": current,
        "value": conversation.title,
        **context,
    }
    return render(request, "chat/_sidebar_item.html", context)


@require_GET
def conversation_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The list alone, for the search box: the conversations that match `q`."""
    return _list(request)


@require_GET
def item(request: AuthenticatedHttpRequest, conversation_id: UUID) -> HttpResponse:
    """One conversation of the list, as it shows (a rename given up)."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    return _item(request, conversation)


@require_http_methods(["GET", "POST"])
def rename(request: AuthenticatedHttpRequest, conversation_id: UUID) -> HttpResponse:
    """GET: the item as a title field; POST: save it, or show what is wrong in place."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    if request.method == "GET":
        return _item(request, conversation, editing=True)
    title = request.POST.get("title", "")
    try:
        services.conversation_rename(conversation=conversation, title=title)
    except services.InvalidInput as problem:
        if not request.htmx:
            flash.error(request, " ".join(problem.errors["title"]))
            return redirect("conversation", conversation_id=conversation.id)
        return _item(
            request, conversation, editing=True, value=title, errors=problem.errors["title"]
        )
    if not request.htmx:
        return redirect("conversation", conversation_id=conversation.id)
    return _item(request, conversation, renamed=True)


@require_POST
def delete(request: AuthenticatedHttpRequest, conversation_id: UUID) -> HttpResponse:
    """Delete, with Undo offered for a few seconds. The open conversation's page has
    nothing left to show: it goes home, where the Undo is offered."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    services.conversation_delete(conversation=conversation)
    if not request.htmx:
        return redirect("home")
    if _param(request, "current") == str(conversation.id):
        return HttpResponseClientRedirect(reverse("home"))
    return _list(request, undo=True)


@require_POST
def restore(request: AuthenticatedHttpRequest, conversation_id: UUID) -> HttpResponse:
    """Undo a delete: the conversation is back, as it was. Undone from the page deleting
    it led to (home, where the Undo says `current` is none), it opens again."""
    conversation = selectors.conversation_get_deleted(
        user=request.user, conversation_id=conversation_id
    )
    services.conversation_restore(conversation=conversation)
    if not request.htmx:
        return redirect("conversation", conversation_id=conversation.id)
    if "current" in request.POST and not request.POST["current"]:
        return HttpResponseClientRedirect(reverse("conversation", args=[conversation.id]))
    return _list(request, undo=True)
