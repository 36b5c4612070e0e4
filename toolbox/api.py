"""`GET /api/tools/`: every tool the user's runs may use, built-in and MCP, and the grants
("Always allow here") they gave; `POST /api/tools/grants/revoke/` takes one back."""

from __future__ import annotations

import json

from django.http import HttpResponse, JsonResponse

from accounts.api_auth import api_endpoint, error
from accounts.http import AuthenticatedHttpRequest
from toolbox import grants, selectors

REVOKE_FIELDS = {"conversation", "server", "tool"}


@api_endpoint("GET")
def tool_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return JsonResponse(
        {"tools": selectors.tools(user=request.user), "grants": grants.grants(user=request.user)}
    )


@api_endpoint("POST")
def grant_revoke(request: AuthenticatedHttpRequest) -> HttpResponse:
    """`{"conversation", "server", "tool"}`: the tool asks again in that conversation."""
    if request.content_type != "application/json":
        return error(400, "Send a JSON object (Content-Type: application/json), not a form.")
    try:
        data = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return error(400, "The body must be a JSON object.")
    if not isinstance(data, dict):
        return error(400, "The body must be a JSON object.")
    if unknown := sorted(set(data) - REVOKE_FIELDS):
        return error(400, f"Not a field of this request: {', '.join(unknown)}.")
    try:
        grants.revoke(user=request.user, **{key: data.get(key) for key in REVOKE_FIELDS})
    except grants.UnknownGrant as problem:
        return error(404, str(problem))
    return JsonResponse({"grants": grants.grants(user=request.user)})
