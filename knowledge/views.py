"""The Documents page: the user's documents and the built-in guide, uploads (with
JavaScript through the API, with progress; without it as a plain form post) and
deletion; a document's page, and an image document's picture."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages as flash
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_cache_control
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.http import AuthenticatedHttpRequest
from knowledge import reading, selectors, services
from knowledge.extraction import ACCEPT, ACCEPTED, DocumentError, megabytes


def _list_context(request: AuthenticatedHttpRequest) -> dict[str, Any]:
    documents = list(selectors.documents_for(request.user))
    return {"documents": documents, "own_count": sum(not d.builtin for d in documents)}


@require_http_methods(["GET", "POST"])
def documents_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The page; a POST is the upload form sent without JavaScript."""
    if request.method == "POST":
        files = request.FILES.getlist("file")
        if not files:
            flash.error(request, "Choose a file to upload.")
        for file in files:
            try:
                document = services.document_upload(owner=request.user, file=file)
            except DocumentError as problem:
                flash.error(request, str(problem))
            else:
                count = document.passage_count
                flash.success(request, f"Added {document.title} ({count} passages).")
        return redirect("documents")
    limit = settings.ORACLE_MAX_UPLOAD_BYTES
    context = {
        **_list_context(request),
        "max_upload_bytes": limit,
        "max_upload": megabytes(limit),
        "accepted": ACCEPTED,
        "accept": ACCEPT,
    }
    return render(request, "knowledge/documents.html", context)


def _list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(request, "knowledge/_document_list.html", _list_context(request))


@require_GET
def document_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The list alone, for the page to refresh after an upload (htmx)."""
    return _list(request)


@require_GET
def document_page(request: AuthenticatedHttpRequest, document_id: str) -> HttpResponse:
    """A document's text, rendered, with its contents (its sections) beside it; the span
    `?start=&length=` point at (a citation's) highlighted. A span that is not one is
    ignored: the page shows the document unmarked."""
    document = selectors.document_get(user=request.user, document_id=document_id)
    sections = reading.section_openings(document.passages.only("ordinal", "start", "location"))
    cited = reading.cited_span(request.GET, len(document.text))
    shown = reading.document_html(document, sections, cited)
    context = {"document": document, "sections": sections, "shown": shown}
    return render(request, "knowledge/document.html", context)


@require_GET
def document_image(request: AuthenticatedHttpRequest, document_id: str) -> HttpResponse:
    """An image document's picture, as it was uploaded, to its owner alone (404 for any
    other document). Served as the type Pillow found it to be, never sniffed as another
    (whatever the site's settings), and shown in the page, not downloaded."""
    image = selectors.image_get(user=request.user, document_id=document_id)
    response = HttpResponse(bytes(image.data), content_type=image.media_type)
    response["X-Content-Type-Options"] = "nosniff"
    named = content_disposition_header(as_attachment=False, filename=image.document.filename)
    response["Content-Disposition"] = named or "inline"
    # Its bytes never change (a new upload is a new document): the browser may keep them.
    patch_cache_control(response, private=True, max_age=3600)
    return response


@require_POST
def document_delete(request: AuthenticatedHttpRequest, document_id: str) -> HttpResponse:
    try:
        services.document_delete(owner=request.user, document_id=document_id)
    except services.BuiltinDocument as problem:
        if request.htmx:
            return HttpResponse(str(problem), status=400)
        flash.error(request, str(problem))
        return redirect("documents")
    if request.htmx:
        return _list(request)
    flash.success(request, "Document deleted.")
    return redirect("documents")
