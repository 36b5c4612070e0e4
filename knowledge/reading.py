"""A document's text as its page shows it: Markdown rendered (as the chat renders it),
any other format as plain text with its lines kept, and an anchor where each section
begins, for the page's contents to lead to."""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.safestring import SafeString, mark_safe

from knowledge.models import Document, Passage
from markup.marks import render_marked


def section_openings(passages: Iterable[Passage]) -> list[Passage]:
    """The passages that open a section: each with a location other than the one before."""
    openings: list[Passage] = []
    previous = ""
    for passage in passages:
        if passage.location and passage.location != previous:
            openings.append(passage)
        previous = passage.location
    return openings


def document_html(document: Document, sections: Iterable[Passage]) -> SafeString:
    """The document's text as safe HTML, with `passage-<ordinal>` where each of
    `sections` begins."""
    anchors = [(passage.start, f"passage-{passage.ordinal}") for passage in sections]
    html = render_marked(document.text, markdown=document.is_markdown, anchors=anchors)
    return mark_safe(html)  # sanitised (Markdown) or escaped (plain) by render_marked
