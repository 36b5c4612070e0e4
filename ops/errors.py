"""What a visitor gets when a request goes wrong: the API answers in JSON (as its own
errors do), pages get Django's plain error pages. Django's debug pages appear only
with DEBUG on, which is off unless asked for."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        if isinstance(exception, RequestDataTooBig):
            return JsonResponse({"error": "The request body is too large."}, status=413)
        return JsonResponse({"error": "Bad request."}, status=400)
    return defaults.bad_request(request, exception or Exception())


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"error": "Forbidden."}, status=403)
    return defaults.permission_denied(request, exception or Exception())


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"error": "Not found."}, status=404)
    return defaults.page_not_found(request, exception or Exception())


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"error": "Something went wrong on our side."}, status=500)
    return defaults.server_error(request)
