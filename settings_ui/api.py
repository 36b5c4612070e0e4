"""GET/PATCH /api/settings/: the caller's own AgentConfig (SPEC section 8)."""

from __future__ import annotations

import json

from django.http import HttpResponse, JsonResponse

from accounts.api_auth import api_endpoint, error
from accounts.http import AuthenticatedHttpRequest
from agents.config import ConfigError
from settings_ui.services import agent_config_for, agent_config_update


@api_endpoint("GET", "PATCH")
def settings_detail(request: AuthenticatedHttpRequest) -> HttpResponse:
    """PATCH changes only the fields sent; one bad field answers 400 and saves nothing."""
    if request.method == "GET":
        return JsonResponse(agent_config_for(user=request.user).to_dict())
    try:
        raw = json.loads(request.body)
    except (ValueError, RecursionError):
        raw = None
    if not isinstance(raw, dict):
        return error(400, 'Send a JSON object of settings, e.g. {"max_iterations": 20}.')
    try:
        config = agent_config_update(user=request.user, raw=raw)
    except ConfigError as bad:
        return JsonResponse({"errors": bad.errors}, status=400)
    return JsonResponse(config.to_dict())
