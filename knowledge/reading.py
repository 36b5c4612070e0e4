"""A document's text as its page shows it: Markdown rendered (as the chat renders it),
any other format as plain text with its lines kept, an anchor where each section begins,
for the page's contents to lead to, and the span a citation points at highlighted
(`knowledge.citations`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe

from knowledge.models import Document, Passage
from markup.marks import HIGHLIGHT_ID, render_marked

MAX_DIGITS = 12


@dataclass(frozen=True)
class Shown:
    """A document's text as HTML, and whether a cited span is highlighted in it."""

    html: SafeString
    cited: bool


def cited_span(query: Mapping[str, str], text_length: int) -> tuple[int, int] | None:
    """The span (start, end) that `?start=&length=` point at, its end cut at the end of
    the text; None when either is missing or not a count, or the span starts outside."""
    start, length = (_count(query.get(name)) for name in ("start", "length"))
    if start is None or length is None or length < 1 or start >= text_length:
        return None
    return start, min(start + length, text_length)


def _count(value: str | None) -> int | None:
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > MAX_DIGITS:
        return None
    return int(value)


def section_openings(passages: Iterable[Passage]) -> list[Passage]:
    """The passages that open a section: each with a location other than the one before."""
    openings: list[Passage] = []
    previous = ""
    for passage in passages:
        if passage.location and passage.location != previous:
            openings.append(passage)
        previous = passage.location
    return openings


def document_html(
    document: Document, sections: Iterable[Passage], cited: tuple[int, int] | None = None
) -> Shown:
    """The document's text as safe HTML, with `passage-<ordinal>` where each of
    `sections` begins and the span `cited` highlighted (the first mark `#passage`)."""
    anchors = [(passage.start, f"passage-{passage.ordinal}") for passage in sections]
    html = render_marked(
        document.text, markdown=document.is_markdown, highlight=cited, anchors=anchors
    )
    # Sanitised (Markdown) or escaped (plain) by render_marked.
    return Shown(mark_safe(html), cited is not None and f'id="{HIGHLIGHT_ID}"' in html)
