"""Uploading documents: each format is indexed, found and read back; a file that fails
leaves no trace (no document, no passage, nothing in the search index)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import QuerySet

from knowledge import selectors
from knowledge.extraction import DocumentError, FileTooLarge
from knowledge.models import Document, Passage
from knowledge.services import document_delete, document_upload, ensure_guide
from tests.knowledge.conftest import (
    index_is_consistent,
    indexed_passage_ids,
    pdf,
    upload,
    uploaded,
    user_documents,
)

pytestmark = pytest.mark.django_db

FILES = {
    "md": ("recipes.md", "# Recipes\n\n## Bread\n\nKnead the dough for ten minutes.\n"),
    "txt": ("recipes.txt", "Bread\n\nKnead the dough for ten minutes.\n"),
    "html": (
        "recipes.html",
        "<html><head><title>Recipes</title></head><body><h2>Bread</h2>"
        "<p>Knead the <em>dough</em> for ten minutes.</p></body></html>",
    ),
    "pdf": ("recipes.pdf", pdf(["Bread", "Knead the dough for ten minutes."])),
}


@pytest.mark.parametrize("kind", FILES)
def test_an_uploaded_file_is_found_and_read_back(alice: User, kind: str) -> None:
    name, content = FILES[kind]

    document = upload(alice, name, content)

    assert document.format == {"md": "markdown", "txt": "text"}.get(kind, kind)
    assert document.filename == name
    assert document.size == len(content.encode() if isinstance(content, str) else content)
    assert document.passage_count == Passage.objects.filter(document=document).count() >= 1
    hits = selectors.search_passages(user=alice, query="How long do I knead dough?")
    assert hits[0].document_id == document.pk
    assert "Knead the dough for ten minutes." in hits[0].text
    piece = selectors.read_text(
        user=alice, document_id=document.pk, start=hits[0].start, length=hits[0].length
    )
    assert piece.text == hits[0].text
    index_is_consistent()


def test_titles_come_from_the_user_then_the_file_then_its_name(alice: User) -> None:
    assert upload(alice, "a.md", "# Bread book\n\nText.").title == "Bread book"
    assert upload(alice, "b.html", FILES["html"][1]).title == "Recipes"
    assert upload(alice, "c-notes.txt", "Text.").title == "c-notes"
    assert upload(alice, "d.md", "# X\n\nText.", title="  My   title ").title == "My title"


def test_passages_span_the_documents_text(alice: User) -> None:
    text = "# Log\n\n" + "\n\n".join(f"Entry {n}: " + "detail " * 40 for n in range(40))

    document = upload(alice, "log.md", text)

    stored = Document.objects.get(pk=document.pk).text
    for passage in Passage.objects.filter(document=document):
        assert stored[passage.start : passage.start + passage.length] == passage.text
        assert passage.length <= 1000
    assert document.passage_count > 10


BAD_FILES = [
    ("slides.pptx", b"PK\x03\x04 zipped", "not a file Oracle can read"),
    ("empty.md", b"", "is empty"),
    ("scan.pdf", pdf([]), "no text to search"),
    ("broken.pdf", b"%PDF-1.7\n1 0 obj << >> endobj\nzebra", "the PDF is damaged"),
    ("binary.txt", b"zebra\x00\x01\x02", "not a text file"),
]


@pytest.mark.parametrize(("name", "data", "message"), BAD_FILES)
def test_a_file_that_cannot_be_read_changes_nothing(
    alice: User, name: str, data: bytes, message: str
) -> None:
    upload(alice, "kept.md", "# Kept\n\nThe zebra stays.")
    before = user_documents(), indexed_passage_ids("zebra")

    with pytest.raises(DocumentError, match=message):
        upload(alice, name, data)

    assert (user_documents(), indexed_passage_ids("zebra")) == before
    index_is_consistent()


def test_a_file_over_the_limit_is_refused_before_it_is_read(alice: User, settings: Any) -> None:
    settings.ORACLE_MAX_UPLOAD_BYTES = 1024 * 1024
    big = uploaded("big.txt", b"zebra " * 200_000)  # 1.2 MB

    with pytest.raises(FileTooLarge) as raised:
        document_upload(owner=alice, file=big)

    assert str(raised.value) == "big.txt is 1.2 MB; files can be at most 1 MB."
    assert user_documents() == (0, 0)
    assert indexed_passage_ids("zebra") == set()


def test_a_pdf_that_unpacks_to_too_much_text_is_refused(alice: User, settings: Any) -> None:
    settings.ORACLE_MAX_UPLOAD_BYTES = 4000
    data = pdf(["All work and no play makes Jack a dull zebra."] * 2000, compress=True)
    assert len(data) < 4000

    with pytest.raises(DocumentError, match=r"holds 91,999 characters of text; .* at most 16,000"):
        upload(alice, "shining.pdf", data)

    assert user_documents() == (0, 0)
    assert indexed_passage_ids("zebra") == set()


def test_the_guide_is_indexed_whatever_the_upload_limit(settings: Any) -> None:
    settings.ORACLE_MAX_UPLOAD_BYTES = 1000
    Document.objects.filter(owner__isnull=True).delete()

    assert ensure_guide().passage_count > 20


def test_a_failure_while_indexing_leaves_nothing_half_indexed(
    alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = QuerySet.bulk_create

    def fail_after_writing(queryset: QuerySet[Any], objs: Any, **kwargs: Any) -> Any:
        written = real(queryset, objs, **kwargs)  # the passages and their index entries...
        if queryset.model is Passage:
            raise RuntimeError("disk full")  # ...then the database fails
        return written

    monkeypatch.setattr(QuerySet, "bulk_create", fail_after_writing)
    with pytest.raises(RuntimeError):
        upload(alice, "zebras.md", "# Zebras\n\n" + "Zebras graze. " * 300)

    assert user_documents() == (0, 0)
    assert indexed_passage_ids("zebra") == set()
    index_is_consistent()


def test_deleting_a_document_takes_its_passages_out_of_the_index(alice: User) -> None:
    document = upload(alice, "zebras.md", "# Zebras\n\nZebras have stripes.")
    assert indexed_passage_ids("zebra")

    document_delete(owner=alice, document_id=document.pk)

    assert user_documents() == (0, 0)
    assert indexed_passage_ids("zebra") == set()
    assert selectors.search_passages(user=alice, query="zebra stripes") == []
    index_is_consistent()


def test_deleting_a_user_takes_their_documents_out_of_the_index(alice: User) -> None:
    upload(alice, "zebras.md", "# Zebras\n\nZebras have stripes.")

    alice.delete()

    assert indexed_passage_ids("zebra") == set()
    index_is_consistent()


def test_a_title_too_long_is_refused(alice: User) -> None:
    with pytest.raises(DocumentError, match=r"At most 200 characters\.") as raised:
        upload(alice, "a.md", "Text", title="x" * 201)

    assert raised.value.field == "title"
    assert user_documents() == (0, 0)
