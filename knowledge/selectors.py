"""Reads of the knowledge base, always scoped: a user sees their own documents and the
built-in guide; anyone else's document does not exist for them (404)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Length, Substr
from django.http import Http404

from knowledge import search
from knowledge.models import Document, DocumentFormat, DocumentImage, Passage
from knowledge.search import SearchHit

MAX_ID = 2**63 - 1


class OutOfRange(ValueError):
    """A read that starts past the end of the document."""


@dataclass(frozen=True)
class TextSlice:
    """Part of a document's text."""

    document_id: int
    title: str
    start: int
    length: int
    total_length: int
    text: str


@dataclass(frozen=True)
class DocumentOpening:
    """One of the user's documents at a glance: its sections and how its text begins."""

    document_id: int
    title: str
    total_length: int
    sections: tuple[str, ...]  # the locations of its passages, in order, none twice
    opening: str


def _visible(user: User) -> Q:
    return Q(owner=user) | Q(owner__isnull=True)


def document_id_from(value: object) -> int:
    """A document id from a URL or a tool call; Http404 for anything that cannot be one."""
    if isinstance(value, bool):
        raise Http404
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
        number = int(value)
    else:
        raise Http404
    if not 1 <= number <= MAX_ID:
        raise Http404
    return number


def documents_for(user: User) -> QuerySet[Document]:
    """The user's documents, newest first, then the built-in guide (text left out; an
    image's size and type with it, not its bytes)."""
    return (
        Document.objects.filter(_visible(user))
        .select_related("image")
        .defer("text", "image__data")
        .order_by(F("owner_id").asc(nulls_last=True), "-created_at", "-id")
    )


def document_get(*, user: User, document_id: object) -> Document:
    """One document the user can see (an image's size and type with it, not its bytes)."""
    try:
        return (
            Document.objects.select_related("image")
            .defer("image__data")
            .get(_visible(user), pk=document_id_from(document_id))
        )
    except Document.DoesNotExist:
        raise Http404 from None


def image_get(*, user: User, document_id: object) -> DocumentImage:
    """The picture of one of the user's image documents, bytes and all; Http404 for any
    other document, or one the user cannot see."""
    image = (
        DocumentImage.objects.select_related("document")
        .filter(
            document__in=Document.objects.filter(_visible(user)), pk=document_id_from(document_id)
        )
        .first()
    )
    if image is None:
        raise Http404
    return image


@dataclass(frozen=True)
class Attachable:
    """One of the user's own documents, as a message attaches it."""

    title: str
    image: bool


def own_attachables(*, user: User, ids: list[int]) -> dict[int, Attachable]:
    """Each of `ids` that is one of the user's own documents (the built-in guide is no
    one's), by id: its title and whether it is an image."""
    rows = Document.objects.filter(owner=user, pk__in=ids).values_list("pk", "title", "format")
    return {pk: Attachable(title, kind == DocumentFormat.IMAGE) for pk, title, kind in rows}


def own_images(*, user: User, ids: list[int]) -> dict[int, tuple[str, bytes]]:
    """The MIME type and bytes of each of `ids` that is one of the user's own images."""
    rows = DocumentImage.objects.filter(document__owner=user, pk__in=ids)
    return {row.pk: (row.media_type, bytes(row.data)) for row in rows}


def search_passages(*, user: User, query: str, limit: int = 5) -> list[SearchHit]:
    """The passages of the user's documents and the guide that best answer `query`."""
    return search.search(search.query_terms(query), owner_id=user.pk, limit=limit)


def read_text(*, user: User, document_id: object, start: int = 0, length: int = 2000) -> TextSlice:
    """`length` characters of a document's text from `start` (fewer at its end). Http404
    for a document the user cannot see; OutOfRange when `start` is past the end."""
    if start < 0:
        raise OutOfRange("start must be 0 or more")
    if length < 1:
        raise OutOfRange("length must be 1 or more")
    row = (
        Document.objects.filter(_visible(user), pk=document_id_from(document_id))
        .annotate(total=Length("text"), piece=Substr("text", start + 1, length))
        .values("pk", "title", "total", "piece")
        .first()
    )
    if row is None:
        raise Http404
    if start >= row["total"]:
        raise OutOfRange(f"start {start} is past the end of the text ({row['total']} characters)")
    piece = row["piece"] or ""
    return TextSlice(row["pk"], row["title"], start, len(piece), row["total"], piece)


def document_openings(
    *, user: User, limit: int, opening_length: int, sections: int
) -> tuple[int, list[DocumentOpening]]:
    """How many documents the user has (the built-in guide aside), and the newest `limit`
    of them with at most `sections` of their locations and their first `opening_length`
    characters."""
    own = Document.objects.filter(owner=user)
    rows = list(
        own.order_by("-created_at", "-id")
        .annotate(total=Length("text"), opening=Substr("text", 1, opening_length))
        .values("pk", "title", "total", "opening")[:limit]
    )
    located: dict[int, list[str]] = {row["pk"]: [] for row in rows}
    passages = (
        Passage.objects.filter(document_id__in=located)
        .exclude(location="")
        .order_by("document_id", "ordinal")
        .values_list("document_id", "location")
    )
    for document_id, location in passages:
        found = located[document_id]
        if location not in found and len(found) < sections:
            found.append(location)
    openings = [
        DocumentOpening(
            row["pk"], row["title"], row["total"], tuple(located[row["pk"]]), row["opening"] or ""
        )
        for row in rows
    ]
    return own.count(), openings
