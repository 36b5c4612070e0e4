"""The documents API (SPEC section 8): upload, list, read and delete, owner-scoped.

Errors about the file answer `{"errors": {"file": [message]}}`: 400 for a missing,
unsupported, empty or unreadable file, 413 for one over ORACLE_MAX_UPLOAD_BYTES.
Another user's document, or an id that cannot be one, answers 404.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.urls import reverse

from accounts.api_auth import api_endpoint, error
from accounts.http import AuthenticatedHttpRequest
from knowledge import selectors, services
from knowledge.document_errors import declared_too_large
from knowledge.extraction import DocumentError, FileTooLarge
from knowledge.models import Document


def document_json(document: Document) -> dict[str, Any]:
    """A document as the API shows it; an image with its type, size in pixels and the
    address of its picture."""
    shown = {
        "id": document.pk,
        "title": document.title,
        "filename": document.filename,
        "format": document.format,
        "size": document.size,
        "passages": document.passage_count,
        "created_at": document.created_at.isoformat(),
        "builtin": document.builtin,
    }
    if document.is_image:
        image = document.image
        shown["image"] = {
            "media_type": image.media_type,
            "width": image.width,
            "height": image.height,
            "url": reverse("document-image", args=[document.pk]),
        }
    return shown


def _file_errors(message: str, status: int = 400, field: str = "file") -> JsonResponse:
    return JsonResponse({"errors": {field: [message]}}, status=status)


def _upload(request: AuthenticatedHttpRequest) -> HttpResponse:
    limit = settings.ORACLE_MAX_UPLOAD_BYTES
    too_large = declared_too_large(request.META.get("CONTENT_LENGTH"), "The upload", limit)
    if too_large is not None:
        # Refused before the body is read (unless the CSRF check of a session read it).
        return _file_errors(str(too_large), 413)
    try:
        file = request.FILES.get("file")
        title = request.POST.get("title", "")
    except MultiPartParserError:
        return _file_errors("Send the file as multipart/form-data, in a field named file.")
    if file is None:
        return _file_errors("Choose a file to upload (a multipart field named file).")
    try:
        document = services.document_upload(owner=request.user, file=file, title=title)
    except FileTooLarge as problem:
        return _file_errors(str(problem), 413)
    except DocumentError as problem:
        return _file_errors(str(problem), field=problem.field)
    return JsonResponse(document_json(document), status=201)


@api_endpoint("GET", "POST")
def documents(request: AuthenticatedHttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _upload(request)
    items = selectors.documents_for(request.user)
    return JsonResponse({"documents": [document_json(d) for d in items]})


@api_endpoint("GET", "DELETE")
def document_detail(request: AuthenticatedHttpRequest, document_id: str) -> HttpResponse:
    """One document with its text; DELETE removes it (the built-in guide answers 400)."""
    try:
        document = selectors.document_get(user=request.user, document_id=document_id)
    except Http404:
        return error(404, "No such document.")
    if request.method == "DELETE":
        try:
            services.document_delete(owner=request.user, document_id=document.pk)
        except services.BuiltinDocument as problem:
            return error(400, str(problem))
        return HttpResponse(status=204)
    return JsonResponse({**document_json(document), "text": document.text})
