"""`GET /api/tools/`: every tool the user's runs may use, built-in and MCP."""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse

from accounts.api_auth import api_endpoint
from accounts.http import AuthenticatedHttpRequest
from toolbox import selectors


@api_endpoint("GET")
def tool_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return JsonResponse({"tools": selectors.tools(user=request.user)})
