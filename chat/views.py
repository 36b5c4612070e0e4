from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """The chat page: conversation list on the side, the conversation in the main pane."""
    return render(
        request,
        "chat/home.html",
        {"offline_model": not settings.ORACLE_MODEL, "model": settings.ORACLE_MODEL},
    )
