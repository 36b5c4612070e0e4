"""HTML and PDF turned into text, paragraph by paragraph (a blank line between two),
with the sections of their headings and pages; and the newlines every format's text
is normalised to."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

from bs4 import BeautifulSoup
from bs4.element import NavigableString, PreformattedString, Tag

from knowledge.document_errors import BrokenFile, DocumentError, UnsupportedFile
from knowledge.models import DocumentFormat
from knowledge.sections import Extracted, Heading, Section, locate


def normalise(text: str) -> str:
    """Newlines as `\n` (a form feed as a paragraph break), no NUL, no trailing space."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    return text.replace("\x00", "").rstrip()


@dataclass
class _Builder:
    """Text assembled from paragraphs (a blank line between two), with its sections."""

    parts: list[str] = field(default_factory=list)
    length: int = 0
    headings: list[Heading] = field(default_factory=list)
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
        text = normalise(text).strip("\n")
        if text.strip():
            self._add(text)

    def heading(self, level: int, text: str) -> None:
        text = " ".join(text.split())
        if text:
            start = self._add(text)
            self.headings.append(Heading(start, start + len(text), level, text))

    def page(self, location: str) -> None:
        self.pending = location

    def extracted(self, kind: DocumentFormat, title: str) -> Extracted:
        sections, lone_title = locate(self.headings)
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


def extract_html(data: bytes, filename: str) -> Extracted:
    """A page's text a reader reads, its headings and its <title>; no scripts, styles, menus."""
    if b"\x00" in data[:8192]:
        raise UnsupportedFile(f"{filename} is not an HTML file (it holds binary data).")
    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    walker = _HtmlText()
    walker.walk(soup)
    walker.end_paragraph()
    return walker.out.extracted(DocumentFormat.HTML, title)


def extract_pdf(data: bytes, filename: str) -> Extracted:
    """A PDF's text page by page (each page a section); a damaged or locked one is refused."""
    from pypdf import PdfReader

    out = _Builder()
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise BrokenFile(f"{filename} is protected by a password: upload a copy without one.")
        for number, page in enumerate(reader.pages, start=1):
            out.page(f"Page {number}")
            for paragraph in re.split(r"\n\s*\n", normalise(page.extract_text() or "")):
                out.paragraph(paragraph)
        title = (reader.metadata.title if reader.metadata else None) or ""
    except DocumentError:
        raise
    except Exception as error:  # pypdf raises many kinds on a damaged file
        raise BrokenFile(
            f"{filename} could not be read: the PDF is damaged or is not a PDF."
        ) from error
    return out.extracted(DocumentFormat.PDF, str(title))
