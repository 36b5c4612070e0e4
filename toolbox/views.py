"""The Tools page: the tools the Oracle may use, and a switch per MCP server."""

from __future__ import annotations

from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from toolbox import selectors, services


@require_GET
def tools_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    builtin = [tool for tool in selectors.tools(user=request.user) if not tool["server"]]
    return render(
        request,
        "toolbox/tools.html",
        {"builtin": builtin, "servers": selectors.servers(user=request.user)},
    )


@require_POST
def server_switch(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    enabled = request.POST.get("enabled")
    if enabled not in ("0", "1"):
        return HttpResponseBadRequest("enabled must be 0 or 1")
    try:
        services.server_switch(user=request.user, name=name, enabled=enabled == "1")
    except services.UnknownServer:
        raise Http404 from None  # the site's 404 page, which never repeats the name
    server = next(s for s in selectors.servers(user=request.user) if s["name"] == name)
    return render(request, "toolbox/_server.html", {"server": server})
