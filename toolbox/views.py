"""The Tools page: the tools the Oracle may use, and a switch per MCP server."""

from __future__ import annotations

from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from toolbox import grants, selectors, services


@require_GET
def tools_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    builtin = [tool for tool in selectors.tools(user=request.user) if not tool["server"]]
    return render(
        request,
        "toolbox/tools.html",
        {
            "builtin": builtin,
            "servers": selectors.servers(user=request.user),
            "grants": grants.grants(user=request.user),
        },
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


@require_POST
def grant_revoke(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Take back an "Always allow here" (form fields conversation, server, tool): the
    grants' list again, or the page when htmx is not there to swap it in."""
    fields = {key: request.POST.get(key) for key in ("conversation", "server", "tool")}
    try:
        grants.revoke(user=request.user, **fields)
    except grants.UnknownGrant as problem:
        return HttpResponse(str(problem), status=404, content_type="text/plain; charset=utf-8")
    if not request.headers.get("HX-Request"):
        return redirect(f"{reverse('tools')}#grants-title")
    return render(request, "toolbox/_grants.html", {"grants": grants.grants(user=request.user)})
