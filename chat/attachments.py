"""The composer's Attach: a file goes into the user's documents through the Documents
page's own service (same kinds, same size limit, same words when it refuses), and comes
back as a chip for the composer, which sends its document's id with the message."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from knowledge import services
from knowledge.document_errors import declared_too_large
from knowledge.extraction import ACCEPT, ACCEPTED, DocumentError, FileTooLarge, megabytes


def attach_context() -> dict[str, str]:
    """What the composer's Attach says and offers: the kinds of file it takes, images
    among them (as the file chooser's `accept`), and the size limit."""
    return {
        "accept": ACCEPT,
        "help": f"{ACCEPTED}, up to {megabytes(settings.ORACLE_MAX_UPLOAD_BYTES)}",
    }


def _refused(message: str, status: int = 400) -> HttpResponse:
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


@require_POST
def attachment_upload(request: AuthenticatedHttpRequest) -> HttpResponse:
    """201 and the chip of the document made from the posted `file`; 400 (413 for a file
    too large) and why, in the Documents page's words, when it is refused: then nothing
    is saved."""
    limit = settings.ORACLE_MAX_UPLOAD_BYTES
    too_large = declared_too_large(request.META.get("CONTENT_LENGTH"), "The file", limit)
    if too_large is not None:
        return _refused(str(too_large), 413)
    try:
        file = request.FILES.get("file")
    except MultiPartParserError:
        file = None
    if file is None:
        return _refused("Choose a file to attach.")
    try:
        document = services.document_upload(owner=request.user, file=file)
    except FileTooLarge as problem:
        return _refused(str(problem), 413)
    except DocumentError as problem:
        return _refused(str(problem))
    chip = {"id": document.pk, "title": document.title, "image": document.is_image}
    return render(request, "chat/_attachment_chip.html", {"document": chip}, status=201)
