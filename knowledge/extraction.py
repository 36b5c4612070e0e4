"""Text out of uploaded files: Markdown and plain text as they are, HTML and PDF converted.

`extract` returns the text and its sections (where each heading or page starts),
or raises a `DocumentError` whose message is meant for the user. It touches no
database: a file that fails here leaves nothing behind.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from pathlib import PurePath

from bs4 import BeautifulSoup
from bs4.element import NavigableString, PreformattedString, Tag

from knowledge.models import DocumentFormat

LOCATION_SEPARATOR = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "
MEGABYTE = 1024 * 1024


class DocumentError(ValueError):
    """A file that cannot become a document. The message is for the user; nothing was saved.

    `field` names the form field at fault (the API answers `{"errors": {field: [message]}}`).
    """

    field = "file"


class UnsupportedFile(DocumentError):
    """Not a kind of file Oracle reads, or not text where text was expected."""


class EmptyDocument(DocumentError):
    """An empty file, or one with no text in it (a scanned PDF)."""


class BrokenFile(DocumentError):
    """A file of a supported kind that cannot be read (a damaged or locked PDF)."""


class FileTooLarge(DocumentError):
    """Bigger than ORACLE_MAX_UPLOAD_BYTES."""

    def __init__(self, filename: str, size: int | None, limit: int) -> None:
        self.limit = limit
        what = f"is {megabytes(size, up=True)}" if size is not None else "is too big"
        super().__init__(f"{filename} {what}; files can be at most {megabytes(limit)}.")


class TooMuchText(DocumentError):
    """More text than a file of the allowed size can hold as plain text (a PDF whose
    compressed streams unpack to far more): refused rather than indexed for minutes."""

    def __init__(self, filename: str, length: int, limit: int) -> None:
        super().__init__(
            f"{filename} holds {length:,} characters of text; a document may hold at most "
            f"{limit:,}."
        )


class InvalidTitle(DocumentError):
    field = "title"


def megabytes(size: int | None, *, up: bool = False) -> str:
    """'5 MB', '7.3 MB', '0.5 MB'; `up` rounds up (a file just over 5 MB is "5.1 MB")."""
    tenths = (size or 0) / MEGABYTE * 10
    return f"{(math.ceil(tenths) if up else round(tenths)) / 10:g} MB"


EXTENSIONS: dict[str, DocumentFormat] = {
    ".md": DocumentFormat.MARKDOWN,
    ".markdown": DocumentFormat.MARKDOWN,
    ".txt": DocumentFormat.TEXT,
    ".text": DocumentFormat.TEXT,
    ".html": DocumentFormat.HTML,
    ".htm": DocumentFormat.HTML,
    ".pdf": DocumentFormat.PDF,
}
CONTENT_TYPES: dict[str, DocumentFormat] = {
    "text/markdown": DocumentFormat.MARKDOWN,
    "text/x-markdown": DocumentFormat.MARKDOWN,
    "text/plain": DocumentFormat.TEXT,
    "text/html": DocumentFormat.HTML,
    "application/xhtml+xml": DocumentFormat.HTML,
    "application/pdf": DocumentFormat.PDF,
}
ACCEPTED = "Markdown (.md), text (.txt), HTML (.html) or PDF (.pdf)"


@dataclass(frozen=True)
class Section:
    """Where a heading (or a page) starts in the text, and the location it opens.

    `end` is the end of the heading's own text; a page has none (`end == start`).
    """

    start: int
    end: int
    location: str


@dataclass(frozen=True)
class Extracted:
    format: DocumentFormat
    text: str
    sections: tuple[Section, ...]
    title: str  # what the file calls itself, or ""


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
    if not data.strip():
        raise EmptyDocument(f"{filename} is empty.")
    if kind is DocumentFormat.PDF:
        extracted = _pdf(data, filename)
    elif kind is DocumentFormat.HTML:
        extracted = _html(data, filename)
    else:
        text = _normalise(_decode(data, filename))
        headings = _markdown_headings(text) if kind is DocumentFormat.MARKDOWN else []
        sections, title = _locate(headings)
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


def _normalise(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    return text.replace("\x00", "").rstrip()


# --- Headings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Heading:
    start: int
    end: int
    level: int
    text: str


def _heading_text(raw: str) -> str:
    return " ".join(raw.strip().strip("*_`").split())


def _locate(headings: list[_Heading]) -> tuple[list[Section], str]:
    """Sections for headings, each located by its path of headings, and the
    title: a lone top heading that comes first names the document and is left out of
    the paths below it."""
    title = ""
    if len(headings) > 1:
        top = min(heading.level for heading in headings)
        if headings[0].level == top and all(h.level > top for h in headings[1:]):
            title = headings[0].text
    stack: list[tuple[int, str]] = []
    sections = []
    for heading in headings:
        if title and heading is headings[0]:
            sections.append(Section(heading.start, heading.end, title))
            continue
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.text))
        location = LOCATION_SEPARATOR.join(text for _, text in stack)
        sections.append(Section(heading.start, heading.end, location))
    return sections, title


# --- Markdown ---------------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NOT_A_HEADING = re.compile(r"^( {4}|\t| {0,3}([>|*+-]|\d+[.)])( |$))")


def _markdown_headings(text: str) -> list[_Heading]:
    """ATX (`## Title`) and setext (a one-line paragraph underlined with === or ---)
    headings, outside fenced code."""
    headings: list[_Heading] = []
    fence = ""
    offset = 0
    candidate: tuple[int, str] | None = None  # a one-line paragraph so far
    blank_before = True
    for line in text.split("\n"):
        start, offset = offset, offset + len(line) + 1
        fenced = _FENCE.match(line)
        if fence:
            if fenced and fenced.group(1)[0] == fence[0] and len(fenced.group(1)) >= len(fence):
                fence = ""
            candidate, blank_before = None, False
            continue
        if fenced:
            fence = fenced.group(1)
            candidate, blank_before = None, False
            continue
        atx = _ATX.match(line)
        setext = _SETEXT.match(line)
        if atx and (title := _heading_text(atx.group(2))):
            headings.append(_Heading(start, start + len(line), len(atx.group(1)), title))
            candidate = None
        elif setext and candidate is not None:
            level = 1 if setext.group(1)[0] == "=" else 2
            headings.append(_Heading(candidate[0], start + len(line), level, candidate[1]))
            candidate = None
        elif line.strip() and blank_before and not _NOT_A_HEADING.match(line):
            candidate = (start, _heading_text(line))
        else:
            candidate = None
        blank_before = not line.strip()
    return headings


# --- HTML and PDF: built paragraph by paragraph -----------------------------------------


@dataclass
class _Builder:
    """Text assembled from paragraphs (a blank line between two), with its sections."""

    parts: list[str] = field(default_factory=list)
    length: int = 0
    headings: list[_Heading] = field(default_factory=list)
    pages: list[Section] = field(default_factory=list)
    pending: str | None = None  # a page's location, opened by its first paragraph

    def _add(self, text: str) -> int:
        if self.parts:
            self.parts.append("\n\n")
            self.length += 2
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        if self.pending is not None:
            self.pages.append(Section(start, start, self.pending))
            self.pending = None
        return start

    def paragraph(self, text: str) -> None:
        text = _normalise(text).strip("\n")
        if text.strip():
            self._add(text)

    def heading(self, level: int, text: str) -> None:
        text = " ".join(text.split())
        if text:
            start = self._add(text)
            self.headings.append(_Heading(start, start + len(text), level, text))

    def page(self, location: str) -> None:
        self.pending = location

    def extracted(self, kind: DocumentFormat, title: str) -> Extracted:
        sections, lone_title = _locate(self.headings)
        sections = sorted([*sections, *self.pages], key=lambda section: section.start)
        title = " ".join(title.split()) or lone_title
        return Extracted(kind, "".join(self.parts), tuple(sections), title)


# Not text a reader reads: code, styles, and the site's navigation menus.
_SKIPPED = {
    "script", "style", "noscript", "template", "head", "svg", "canvas", "iframe", "object", "nav",
}  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_LINES = {"li", "tr", "dt", "dd", "option", "caption"}
_BLOCKS = {
    "address", "article", "aside", "blockquote", "body", "center", "details", "div", "dl",
    "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "html", "main", "ol",
    "p", "pre", "section", "summary", "table", "tbody", "tfoot", "thead", "ul",
}  # fmt: skip


class _HtmlText:
    """Walks the parsed page: blocks become paragraphs, list items and rows lines."""

    def __init__(self) -> None:
        self.out = _Builder()
        self.lines: list[str] = []
        self.line: list[str] = []
        self.pre = 0  # inside how many <pre>: whitespace is kept there

    def text(self, value: str) -> None:
        first, *rest = value.split("\n") if self.pre else [value]
        self.line.append(first)
        for piece in rest:
            self.newline()
            self.line.append(piece)

    def newline(self) -> None:
        line = "".join(self.line)
        self.line = []
        line = line.rstrip() if self.pre else " ".join(line.split())
        if line or (self.pre and self.lines):
            self.lines.append(line)

    def end_paragraph(self) -> None:
        self.newline()
        if self.lines:
            self.out.paragraph("\n".join(self.lines).strip("\n"))
        self.lines = []

    def walk(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, PreformattedString):  # comments, doctype, CDATA...
                continue
            if isinstance(child, NavigableString):
                self.text(str(child))
                continue
            if not isinstance(child, Tag) or child.name in _SKIPPED:
                continue
            name = child.name
            if name in _HEADINGS:
                self.end_paragraph()
                self.out.heading(_HEADINGS[name], child.get_text(" ", strip=True))
            elif name == "br":
                self.newline()
            elif name in _LINES:
                self.newline()
                self.walk(child)
                self.newline()
            elif name in _BLOCKS:
                self.end_paragraph()
                self.pre += name == "pre"
                self.walk(child)
                self.end_paragraph()
                self.pre -= name == "pre"
            elif name in ("td", "th"):
                self.line.append(" ")
                self.walk(child)
                self.line.append(" ")
            else:
                self.walk(child)


def _html(data: bytes, filename: str) -> Extracted:
    if b"\x00" in data[:8192]:
        raise UnsupportedFile(f"{filename} is not an HTML file (it holds binary data).")
    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    walker = _HtmlText()
    walker.walk(soup)
    walker.end_paragraph()
    return walker.out.extracted(DocumentFormat.HTML, title)


def _pdf(data: bytes, filename: str) -> Extracted:
    from pypdf import PdfReader

    out = _Builder()
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise BrokenFile(f"{filename} is protected by a password: upload a copy without one.")
        for number, page in enumerate(reader.pages, start=1):
            out.page(f"Page {number}")
            for paragraph in re.split(r"\n\s*\n", _normalise(page.extract_text() or "")):
                out.paragraph(paragraph)
        title = (reader.metadata.title if reader.metadata else None) or ""
    except DocumentError:
        raise
    except Exception as error:  # pypdf raises many kinds on a damaged file
        raise BrokenFile(
            f"{filename} could not be read: the PDF is damaged or is not a PDF."
        ) from error
    return out.extracted(DocumentFormat.PDF, str(title))
