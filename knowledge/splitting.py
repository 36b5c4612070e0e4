"""A document's text cut into passages: paragraphs packed up to about 1,000 characters,
a new passage at every heading (and page), each located under its nearest heading."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from knowledge.extraction import Section

MAX_PASSAGE_CHARS = 1000
_PARAGRAPH = re.compile(r"(?:[^\n]|\n(?![ \t]*(?:\n|$)))+")  # text up to a blank line


@dataclass(frozen=True)
class Span:
    """A passage: `length` characters of the text from `start`, under `location`."""

    start: int
    length: int
    location: str


def split_passages(
    text: str, sections: Sequence[Section], *, max_chars: int = MAX_PASSAGE_CHARS
) -> list[Span]:
    """Passages that cover every paragraph of `text` once, in order.

    Paragraphs are packed together while the passage stays within `max_chars`; a
    heading or a page always starts a new passage (a heading with nothing under it yet
    stays with what follows); a paragraph longer than `max_chars` is cut at a line,
    sentence or word break.
    """
    starts = [section.start for section in sections]

    def section_at(offset: int) -> int:
        """The index of the section in force at `offset`, or -1 before the first."""
        return bisect.bisect_right(starts, offset) - 1

    spans: list[Span] = []
    first = last = -1
    location: str | None = None  # set by the first paragraph that is not a heading

    def close() -> None:
        nonlocal first, location
        if first >= 0:
            # Headings only (at the very end): the last of them.
            fallback = sections[section_at(last - 1)].location if section_at(last - 1) >= 0 else ""
            spans.append(Span(first, last - first, fallback if location is None else location))
        first, location = -1, None

    for start, end in _pieces(text, sections, max_chars):
        index = section_at(start)
        opens = index > section_at(last)  # a heading or a page begins between the two
        heading = index >= 0 and sections[index].end >= end > sections[index].start
        if location is not None and (opens or end - first > max_chars):
            close()
        if first < 0:
            first = start
        last = end
        if not heading and location is None:
            location = sections[index].location if index >= 0 else ""
    close()
    return spans


def _pieces(text: str, sections: Sequence[Section], max_chars: int) -> Iterator[tuple[int, int]]:
    """Paragraphs as (start, end), cut where a section starts or a heading ends, and
    again when longer than `max_chars`; without their surrounding whitespace."""
    cuts = sorted({offset for s in sections for offset in (s.start, s.end)})
    for match in _PARAGRAPH.finditer(text):
        start, end = match.span()
        inside = cuts[bisect.bisect_right(cuts, start) : bisect.bisect_left(cuts, end)]
        for piece_start, piece_end in zip([start, *inside], [*inside, end], strict=True):
            piece_start, piece_end = _trim(text, piece_start, piece_end)
            while piece_end - piece_start > max_chars:
                cut = _break(text, piece_start, piece_start + max_chars)
                yield _trim(text, piece_start, cut)
                piece_start, piece_end = _trim(text, cut, piece_end)
            if piece_end > piece_start:
                yield piece_start, piece_end


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _break(text: str, start: int, limit: int) -> int:
    """Where to cut text[start:limit]: after the last line break, else sentence end, else
    space in its second half; at `limit` when there is none."""
    half = start + (limit - start) // 2
    for pattern in ("\n", ". ", "? ", "! ", "; ", " "):
        found = text.rfind(pattern, half, limit)
        if found >= 0:
            return found + len(pattern)
    return limit
