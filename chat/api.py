"""The JSON API of SPEC section 8: conversations, messages, runs, and the SSE event stream."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from accounts.api_auth import api_endpoint, error
from accounts.http import AuthenticatedHttpRequest
from agents.skills import Skill, skills
from chat import selectors, services
from chat.models import UNSTORABLE, Conversation, Message, Run

MAX_BODY_BYTES = 256 * 1024


def _body(request: HttpRequest) -> dict[str, Any]:
    if request.content_type == "multipart/form-data":
        # A session's CSRF check has read a form's body already: it is not JSON anyway.
        raise services.InvalidInput({"body": ["Send a JSON object, not a form."]})
    if len(request.body) > MAX_BODY_BYTES:
        raise services.InvalidInput({"body": [f"At most {MAX_BODY_BYTES} bytes."]})
    if not request.body:
        return {}
    try:
        data = json.loads(request.body)
    except (ValueError, UnicodeDecodeError, RecursionError):  # nested too deep: not ours
        raise services.InvalidInput({"body": ["Not valid JSON."]}) from None
    if not isinstance(data, dict):
        raise services.InvalidInput({"body": ["Must be a JSON object."]})
    for name, value in data.items():
        if isinstance(value, str) and UNSTORABLE.search(value):
            raise services.InvalidInput(
                {name: ["Contains a character text cannot hold (NUL or a lone surrogate)."]}
            )
    return data


def conversation_json(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": str(conversation.id),
        "title": conversation.title,
        "skill": conversation.skill,
        "created_at": conversation.created_at.isoformat(),
        "updated_at": conversation.updated_at.isoformat(),
    }


def skill_json(skill: Skill) -> dict[str, Any]:
    return {"name": skill.name, "title": skill.title, "description": skill.description}


def message_json(message: Message) -> dict[str, Any]:
    return {
        "seq": message.seq,
        "role": message.role,
        "content": message.content,
        "termination_reason": message.termination_reason or None,
        "failure_class": message.failure_class or None,
        "metadata": message.metadata,
        "run_id": str(message.run_id) if message.run_id else None,
        "created_at": message.created_at.isoformat(),
    }


def run_json(run: Run) -> dict[str, Any]:
    return {
        "id": str(run.id),
        "conversation_id": str(run.conversation_id),
        "status": run.status,
        "reason": run.reason or None,
        "failure_class": run.failure_class or None,
        **run.counters,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "pending_approval": run.pending_approval,
        # Its worker went silent; a worker's sweeper will record it interrupted and resume it.
        "lost": run.is_lost(timezone.now()),
    }


def _invalid(problem: services.InvalidInput) -> JsonResponse:
    return JsonResponse({"errors": problem.errors}, status=400)


@api_endpoint("GET", "POST")
def conversations(request: AuthenticatedHttpRequest) -> HttpResponse:
    if request.method == "GET":
        items = selectors.conversation_list(user=request.user)
        return JsonResponse({"conversations": [conversation_json(c) for c in items]})
    try:
        data = _body(request)
        conversation = services.conversation_create(
            owner=request.user,
            title=data.get("title", ""),
            skill=data.get("skill", "default"),
        )
    except services.InvalidInput as problem:
        return _invalid(problem)
    return JsonResponse(conversation_json(conversation), status=201)


@api_endpoint("GET")
def skill_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The skills a conversation can start with, in the order they are offered."""
    return JsonResponse({"skills": [skill_json(skill) for skill in skills()]})


@api_endpoint("GET", "PATCH", "DELETE")
def conversation_detail(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    try:
        conversation = selectors.conversation_get(
            user=request.user, conversation_id=conversation_id
        )
    except Http404:
        return error(404, "No such conversation.")
    if request.method == "DELETE":
        services.conversation_delete(conversation=conversation)
        return HttpResponse(status=204)
    if request.method == "PATCH":
        try:
            data = _body(request)
            unknown = set(data) - {"title"}
            if unknown:
                raise services.InvalidInput({k: ["Cannot be changed."] for k in sorted(unknown)})
            if "title" in data:  # a PATCH changes only what it names
                services.conversation_rename(conversation=conversation, title=data["title"])
        except services.InvalidInput as problem:
            return _invalid(problem)
    body = conversation_json(conversation)
    body["messages"] = [message_json(m) for m in selectors.message_list(conversation=conversation)]
    body["runs"] = [run_json(r) for r in conversation.runs.all()]
    return JsonResponse(body)


@api_endpoint("POST")
def conversation_messages(request: AuthenticatedHttpRequest, conversation_id: str) -> HttpResponse:
    try:
        conversation = selectors.conversation_get(
            user=request.user, conversation_id=conversation_id
        )
    except Http404:
        return error(404, "No such conversation.")
    try:
        data = _body(request)
        message, run = services.message_post(
            conversation=conversation,
            content=data.get("content"),
            documents=data.get("documents", []),
        )
    except services.InvalidInput as problem:
        return _invalid(problem)
    except services.RunConflict as conflict:
        return error(409, str(conflict))
    return JsonResponse({"message_id": message.pk, "run_id": str(run.pk)}, status=202)


def run_or_404(request: HttpRequest, run_id: str) -> Run:
    return selectors.run_get(user=request.user, run_id=run_id)


@api_endpoint("GET")
def run_detail(request: AuthenticatedHttpRequest, run_id: str) -> HttpResponse:
    try:
        return JsonResponse(run_json(run_or_404(request, run_id)))
    except Http404:
        return error(404, "No such run.")


def _run_action(
    request: AuthenticatedHttpRequest, run_id: str, action: Callable[..., Run]
) -> HttpResponse:
    try:
        run = action(run=run_or_404(request, run_id))
    except Http404:
        return error(404, "No such run.")
    except services.RunConflict as conflict:
        return error(409, str(conflict))
    return JsonResponse(run_json(run), status=202)


@api_endpoint("POST")
def run_cancel(request: AuthenticatedHttpRequest, run_id: str) -> HttpResponse:
    return _run_action(request, run_id, services.run_cancel)


@api_endpoint("POST")
def run_continue(request: AuthenticatedHttpRequest, run_id: str) -> HttpResponse:
    return _run_action(request, run_id, services.run_continue)


_FORM_BOOLEANS = {"1": True, "true": True, "on": True, "0": False, "false": False, "": False}


def _approval(request: AuthenticatedHttpRequest, run_id: str, *, approved: bool) -> HttpResponse:
    """Approve or Deny: a JSON body `{"call_id"?, "always"?}` (the API) or the same as
    form fields (the chat's buttons)."""
    try:
        if request.content_type == "application/json":
            data = _body(request)
        else:
            data = {
                key: request.POST.get(key) for key in ("call_id", "always") if key in request.POST
            }
            if data.get("always") in _FORM_BOOLEANS:  # else the service names the error
                data["always"] = _FORM_BOOLEANS[data["always"]]
        unknown = sorted(set(data) - ({"call_id", "always"} if approved else {"call_id"}))
        if unknown:
            raise services.InvalidInput(
                {name: ["Not a field of this request."] for name in unknown}
            )
        run = run_or_404(request, run_id)
        if approved:
            run = services.run_approve(run=run, call_id=data.get("call_id"),
                                       always=data.get("always", False))  # fmt: skip
        else:
            run = services.run_deny(run=run, call_id=data.get("call_id"))
    except Http404:
        return error(404, "No such run.")
    except services.InvalidInput as problem:
        return _invalid(problem)
    except services.RunConflict as conflict:
        return error(409, str(conflict))
    return JsonResponse(run_json(run), status=202)


@api_endpoint("POST")
def run_approve(request: AuthenticatedHttpRequest, run_id: str) -> HttpResponse:
    return _approval(request, run_id, approved=True)


@api_endpoint("POST")
def run_deny(request: AuthenticatedHttpRequest, run_id: str) -> HttpResponse:
    return _approval(request, run_id, approved=False)
