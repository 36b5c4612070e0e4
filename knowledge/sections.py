"""Where each heading or page starts in a document's text, and the location it opens:
the sections an extracted document carries, found among Markdown's headings or recorded
as HTML and PDF are converted."""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.models import DocumentFormat

LOCATION_SEPARATOR = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "


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


@dataclass(frozen=True)
class Heading:
    """A heading in the text: where it starts and ends, its level (1 the top) and its words."""

    start: int
    end: int
    level: int
    text: str


def _heading_text(raw: str) -> str:
    return " ".join(raw.strip().strip("*_`").split())


def locate(headings: list[Heading]) -> tuple[list[Section], str]:
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


def markdown_headings(text: str) -> list[Heading]:
    """ATX (`## Title`) and setext (a one-line paragraph underlined with === or ---)
    headings, outside fenced code."""
    headings: list[Heading] = []
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
            headings.append(Heading(start, start + len(line), len(atx.group(1)), title))
            candidate = None
        elif setext and candidate is not None:
            level = 1 if setext.group(1)[0] == "=" else 2
            headings.append(Heading(candidate[0], start + len(line), level, candidate[1]))
            candidate = None
        elif line.strip() and blank_before and not _NOT_A_HEADING.match(line):
            candidate = (start, _heading_text(line))
        else:
            candidate = None
        blank_before = not line.strip()
    return headings
