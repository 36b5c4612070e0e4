"""Writes of the knowledge base: uploads, deletions and the built-in guide.

A document is written in one transaction with all its passages (the search index
follows them, knowledge/search.py): a file that fails anywhere leaves nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePath

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import DEFAULT_DB_ALIAS, IntegrityError, transaction

from chat.models import UNSTORABLE
from knowledge.extraction import (
    DocumentError,
    Extracted,
    FileTooLarge,
    InvalidTitle,
    TooMuchText,
    detect_format,
    extract,
)
from knowledge.images import ImageFacts, image_kind, inspect_image
from knowledge.models import Document, DocumentFormat, DocumentImage, Passage
from knowledge.splitting import Span, split_passages

TITLE_MAX = 200
# Characters of text a document may hold per byte of the upload limit: compressed PDFs
# hold more text than their size, but not without bound.
TEXT_PER_UPLOAD_BYTE = 4
GUIDE_PATH = Path(__file__).with_name("guide.md")


class BuiltinDocument(DocumentError):
    """The built-in guide belongs to no one and cannot be deleted."""

    def __init__(self) -> None:
        super().__init__("The built-in guide cannot be deleted.")


def _filename(name: str | None) -> str:
    return PurePath((name or "").replace("\\", "/")).name.strip()[:255] or "document"


def _title(title: str) -> str:
    cleaned = " ".join(str(title).split())
    if len(cleaned) > TITLE_MAX:
        raise InvalidTitle(f"At most {TITLE_MAX} characters.")
    if UNSTORABLE.search(cleaned):
        raise InvalidTitle("Contains a character text cannot hold (NUL or a lone surrogate).")
    return cleaned


def _read(file: UploadedFile[bytes], filename: str) -> bytes:
    """The file's bytes, refusing more than ORACLE_MAX_UPLOAD_BYTES (before reading them
    when the size is known)."""
    limit = settings.ORACLE_MAX_UPLOAD_BYTES
    if file.size is not None and file.size > limit:
        raise FileTooLarge(filename, file.size, limit)
    data = bytearray()
    for chunk in file.chunks():
        data += chunk
        if len(data) > limit:
            raise FileTooLarge(filename, None, limit)
    return bytes(data)


def document_upload(*, owner: User, file: UploadedFile[bytes], title: str = "") -> Document:
    """Add a file to the owner's documents: its text, cut into searchable passages; an
    image's bytes, with a line saying what it is for its text (`knowledge.images`).

    Raises a `DocumentError` (a ValueError whose message is for the user) for a file of
    an unsupported kind, an empty or unreadable one, one that is not the image its name
    says, or one over the size limit.
    """
    filename = _filename(file.name)
    title = _title(title)
    content_type = file.content_type or ""
    kind = detect_format(filename, content_type)  # refuse before reading
    data = _read(file, filename)
    picture: ImageFacts | None = None
    if kind is DocumentFormat.IMAGE:
        named = image_kind(filename, content_type)
        assert named is not None, "detect_format found an image"
        picture = inspect_image(data, filename=filename, kind=named)
        extracted = Extracted(kind, picture.description(filename), (), "")
    else:
        extracted = extract(data, filename=filename, content_type=content_type)
    most = TEXT_PER_UPLOAD_BYTE * settings.ORACLE_MAX_UPLOAD_BYTES
    if len(extracted.text) > most:
        raise TooMuchText(filename, len(extracted.text), most)
    title = title or _title(extracted.title[:TITLE_MAX]) or PurePath(filename).stem or filename
    document = Document(
        owner=owner,
        title=title,
        filename=filename,
        format=extracted.format,
        size=len(data),
        content_hash=hashlib.sha256(data).hexdigest(),
    )
    spans = split_passages(extracted.text, extracted.sections)  # before the write lock
    with transaction.atomic():
        _index(document, extracted.text, spans)
        if picture is not None:
            DocumentImage.objects.create(
                document=document, data=data, media_type=picture.kind.media_type,
                width=picture.width, height=picture.height,
            )  # fmt: skip
    return document


def _index(document: Document, text: str, spans: list[Span], using: str = DEFAULT_DB_ALIAS) -> None:
    """Save the document with its text and passages (inside the caller's transaction)."""
    document.text = text
    document.passage_count = len(spans)
    document.save(using=using)
    Passage.objects.using(using).bulk_create(
        [
            Passage(
                document=document,
                ordinal=ordinal,
                start=span.start,
                length=span.length,
                location=span.location[:300],
                text=text[span.start : span.start + span.length],
            )
            for ordinal, span in enumerate(spans)
        ],
        batch_size=500,
    )


def document_delete(*, owner: User, document_id: object) -> None:
    """Delete one of the owner's documents with its passages. Http404 when the owner
    cannot see it; `BuiltinDocument` for the guide."""
    from knowledge.selectors import document_get

    document = document_get(user=owner, document_id=document_id)
    if document.builtin:
        raise BuiltinDocument
    document.delete()


# --- The built-in guide -------------------------------------------------------------------


def ensure_guide(*, using: str = DEFAULT_DB_ALIAS) -> Document:
    """Index `knowledge/guide.md` as the built-in document, unless it is already indexed
    as it is now (by its SHA-256): idempotent, and it keeps the document's id."""
    data = GUIDE_PATH.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    documents = Document.objects.using(using).filter(owner__isnull=True, filename=GUIDE_PATH.name)
    current = documents.first()
    if current is not None and current.content_hash == digest:
        return current
    extracted = extract(data, filename=GUIDE_PATH.name)
    spans = split_passages(extracted.text, extracted.sections)
    guide = current or Document(owner=None, filename=GUIDE_PATH.name)
    guide.title = extracted.title[:TITLE_MAX] or "Oracle user guide"
    guide.format = extracted.format
    guide.size = len(data)
    guide.content_hash = digest
    try:
        with transaction.atomic(using=using):
            if current is not None:
                Passage.objects.using(using).filter(document=current).delete()
            _index(guide, extracted.text, spans, using)
    except IntegrityError:  # another process indexed it at the same moment
        return documents.get()
    return guide
