"""Helpers for the knowledge-base tests: uploads from bytes, a PDF made by hand, and a
look into the full-text index itself (not through the search code under test)."""

from __future__ import annotations

import zlib
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from knowledge.extraction import LOCATION_SEPARATOR
from knowledge.models import Document, Passage
from knowledge.services import document_upload


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


CONTENT_TYPES = {
    "md": "text/markdown",
    "txt": "text/plain",
    "html": "text/html",
    "pdf": "application/pdf",
}


def uploaded(
    name: str, content: bytes | str, content_type: str | None = None
) -> SimpleUploadedFile:
    data = content.encode() if isinstance(content, str) else content
    kind = content_type or CONTENT_TYPES.get(name.rsplit(".", 1)[-1], "application/octet-stream")
    return SimpleUploadedFile(name, data, content_type=kind)


def upload(user: User, name: str, content: bytes | str, title: str = "") -> Document:
    return document_upload(owner=user, file=uploaded(name, content), title=title)


def under(*headings: str) -> str:
    """A passage's location: its headings, joined as the page shows them."""
    return LOCATION_SEPARATOR.join(headings)


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def pdf(*pages: list[str], compress: bool = False) -> bytes:
    """A real PDF with one page per list of lines, in Helvetica (pypdf reads it back)."""
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{i} 0 R" for i in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for page_id, lines in zip(page_ids, pages, strict=True):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {page_id + 1} 0 R >>".encode()
        )
        shown = " T* ".join(f"{_pdf_string(line)} Tj" for line in lines)
        stream = f"BT /F1 11 Tf 14 TL 72 720 Td {shown} ET".encode() if lines else b""
        if compress:
            stream = zlib.compress(stream)
            head = f"<< /Length {len(stream)} /Filter /FlateDecode >>"
        else:
            head = f"<< /Length {len(stream)} >>"
        objects.append(head.encode() + b"\nstream\n" + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def indexed_passage_ids(word: str) -> set[int]:
    """Ids of the passages the database's own index finds for `word`, read straight from
    the index (on SQLite, entries left behind for deleted passages would show here)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT rowid FROM knowledge_passage_fts WHERE knowledge_passage_fts MATCH %s",
                [f'"{word}"'],
            )
        else:
            cursor.execute(
                "SELECT id FROM knowledge_passage WHERE search @@ plainto_tsquery('english', %s)",
                [word],
            )
        return {row[0] for row in cursor.fetchall()}


def index_is_consistent() -> bool:
    """SQLite: FTS5's own check that the index holds exactly the passages' rows."""
    if connection.vendor != "sqlite":
        return True
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO knowledge_passage_fts (knowledge_passage_fts, rank) "
            "VALUES ('integrity-check', 1)"
        )
    return True


def user_documents() -> tuple[int, int]:
    """(documents, passages) that belong to users (the built-in guide left out)."""
    return (
        Document.objects.filter(owner__isnull=False).count(),
        Passage.objects.filter(document__owner__isnull=False).count(),
    )
