"""Text out of uploaded files: Markdown and plain text as they are, HTML and PDF converted.

`extract` returns the text and its sections (where each heading or page starts),
or raises a `DocumentError` whose message is meant for the user. It touches no
database: a file that fails here leaves nothing behind. Images are documents too, but
no text is extracted from them (`knowledge.images`).
"""

from __future__ import annotations

from pathlib import PurePath

from knowledge import images
from knowledge.conversion import extract_html, extract_pdf, normalise
from knowledge.document_errors import MEGABYTE as MEGABYTE
from knowledge.document_errors import BrokenFile as BrokenFile
from knowledge.document_errors import DocumentError as DocumentError
from knowledge.document_errors import EmptyDocument as EmptyDocument
from knowledge.document_errors import FileTooLarge as FileTooLarge
from knowledge.document_errors import InvalidTitle as InvalidTitle
from knowledge.document_errors import TooMuchText as TooMuchText
from knowledge.document_errors import UnsupportedFile as UnsupportedFile
from knowledge.document_errors import megabytes as megabytes
from knowledge.models import DocumentFormat
from knowledge.sections import LOCATION_SEPARATOR as LOCATION_SEPARATOR
from knowledge.sections import Extracted as Extracted
from knowledge.sections import Section as Section
from knowledge.sections import locate, markdown_headings

EXTENSIONS: dict[str, DocumentFormat] = {
    ".md": DocumentFormat.MARKDOWN,
    ".markdown": DocumentFormat.MARKDOWN,
    ".txt": DocumentFormat.TEXT,
    ".text": DocumentFormat.TEXT,
    ".html": DocumentFormat.HTML,
    ".htm": DocumentFormat.HTML,
    ".pdf": DocumentFormat.PDF,
    **dict.fromkeys(images.EXTENSIONS, DocumentFormat.IMAGE),
}
CONTENT_TYPES: dict[str, DocumentFormat] = {
    "text/markdown": DocumentFormat.MARKDOWN,
    "text/x-markdown": DocumentFormat.MARKDOWN,
    "text/plain": DocumentFormat.TEXT,
    "text/html": DocumentFormat.HTML,
    "application/xhtml+xml": DocumentFormat.HTML,
    "application/pdf": DocumentFormat.PDF,
    **dict.fromkeys(images.MEDIA_TYPES, DocumentFormat.IMAGE),
}
ACCEPTED = f"Markdown (.md), text (.txt), HTML (.html), PDF (.pdf) or {images.ACCEPTED}"
# The file chooser's `accept`: every extension and content type above.
ACCEPT = ",".join([*EXTENSIONS, *CONTENT_TYPES])


def detect_format(filename: str, content_type: str = "") -> DocumentFormat:
    """The format from the file's extension, else from its content type."""
    suffix = PurePath(filename).suffix.lower()
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    kind = content_type.split(";")[0].strip().lower()
    if not suffix and kind in CONTENT_TYPES:
        return CONTENT_TYPES[kind]
    raise UnsupportedFile(
        f"{filename or 'This file'} is not a file Oracle can read: upload {ACCEPTED}."
    )


def extract(data: bytes, *, filename: str, content_type: str = "") -> Extracted:
    """The text of a file, by its format; raises `DocumentError` with a message for the user."""
    kind = detect_format(filename, content_type)
    if kind is DocumentFormat.IMAGE:
        raise UnsupportedFile(f"{filename} is an image: it has no text to extract.")
    if not data.strip():
        raise EmptyDocument(f"{filename} is empty.")
    if kind is DocumentFormat.PDF:
        extracted = extract_pdf(data, filename)
    elif kind is DocumentFormat.HTML:
        extracted = extract_html(data, filename)
    else:
        text = normalise(_decode(data, filename))
        headings = markdown_headings(text) if kind is DocumentFormat.MARKDOWN else []
        sections, title = locate(headings)
        title = title or next((h.text for h in headings if h.level == 1), "")
        extracted = Extracted(kind, text, tuple(sections), title)
    if not extracted.text.strip():
        scanned = (
            " (a scanned PDF holds only pictures of its pages)"
            if kind is DocumentFormat.PDF
            else ""
        )
        raise EmptyDocument(f"{filename} has no text to search{scanned}.")
    return extracted


def _decode(data: bytes, filename: str) -> str:
    if b"\x00" in data[:8192]:
        raise UnsupportedFile(f"{filename} is not a text file (it holds binary data).")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnsupportedFile(
            f"{filename} is not UTF-8 text: save it as UTF-8 and upload it again."
        ) from None
