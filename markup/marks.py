"""A text rendered with marks in it: the span a citation points at, highlighted with
<mark> (the first of them `id="passage"`), and anchors a page links to.

Offsets are the source text's, so a mark goes into the source before it is rendered:
a character of rare punctuation, which Markdown renders as text (punctuation, so that
the emphasis beside it still works) and the sanitiser keeps. The rendered HTML is then
read as tags and text, and each mark becomes tags between them, never inside one: a
highlight that crosses paragraphs, list items or cells is a <mark> in each. Where a mark
would change the Markdown around it (before a heading's `#`, a bullet, a fence, a table's
last `|`), it moves to the nearest place that does not; a mark Markdown left out (in a
link's address) is dropped, and a highlight that lost either end is not shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from markup.markdown import render_markdown

# Rare punctuation (Unicode's Supplemental Punctuation); three not in the text are used.
_CANDIDATES = "\u2e3c\u2e3d\u2e3e\u2e41\u2e4c\u2e4d\u2e4e\u2e2e\u2e30\u2e32\u2e34\u2e35"
HIGHLIGHT_ID = "passage"
_MARK_CLASS = "cited"

# What opens a line of Markdown: indentation, quote marks, a bullet or number, a task's
# box, a heading's hashes, a table's first pipe.
_LEAD = re.compile(
    r"[ \t]*(?:(?:>|\|)[ \t]*|(?:[-*+]|\d{1,9}[.)]|#{1,6}|\[[ xX]\])(?=[ \t]|$)[ \t]*)*"
)
# A line with no text of its own: blank, a fence, a rule or a heading's underline, a
# table's alignment row, a link's definition (none of them can hold a mark).
_BARE_LINE = re.compile(
    r"[ \t]*(?:(?:`{3,}|~{3,}).*|(?:[-*_=][ \t]*)+|\|?(?:[ \t]*:?-+:?[ \t]*\|?)+|\[[^\]]+\]:.*)?"
)
# What closes a line: a table's last pipe, a heading's closing hashes.
_TRAILING = re.compile(r"(?:[ \t]*\|+|[ \t]+#+)[ \t]*$")
_TAG = re.compile(r"(<(?:[^>\"']|\"[^\"]*\"|'[^']*')*>)")


@dataclass(frozen=True)
class _Chars:
    open: str
    close: str
    anchor: str

    def encoded(self) -> list[str]:
        """The marks as a link's address holds them (percent-encoded), and as they are."""
        return [quote(c) for c in (self.open, self.close, self.anchor)] + [*self.all()]

    def all(self) -> tuple[str, str, str]:
        return (self.open, self.close, self.anchor)


def render_marked(
    text: str,
    *,
    markdown: bool,
    highlight: tuple[int, int] | None = None,
    anchors: Sequence[tuple[int, str]] = (),
) -> str:
    """Safe HTML for `text`, Markdown or plain (escaped, its lines kept), with the span
    `highlight` (start, end) marked and an empty element with each anchor's id where it
    starts (offset, id), all in offsets of `text`."""
    unused = [c for c in _CANDIDATES if c not in text]
    if len(unused) < 3:  # a text of that punctuation: shown unmarked
        return render_markdown(text) if markdown else escape(text)
    chars = _Chars(*unused[:3])
    inserts: list[tuple[int, int, str, str]] = []  # (offset, order at one offset, mark, id)
    if highlight is not None:
        start, end = highlight
        if markdown:
            start, end = _opening(text, start, end), _closing(text, end, start)
        if start < end:
            inserts += [(start, 2, chars.open, ""), (end, 0, chars.close, "")]
    for offset, name in anchors:
        at = _opening(text, offset, len(text)) if markdown else offset
        inserts.append((min(at, len(text)), 1, chars.anchor, escape(name)))
    inserts.sort()
    marked, previous = [], 0
    for offset, _, char, _ in inserts:
        marked += [text[previous:offset], char]
        previous = offset
    source = "".join([*marked, text[previous:]])
    html = render_markdown(source) if markdown else escape(source)
    names = [name for _, _, char, name in inserts if char == chars.anchor]
    return _placed(html, chars, names, highlight is not None)


def _opening(text: str, position: int, limit: int) -> int:
    """Where a mark for the text from `position` can go: past what opens its line, and
    past lines with no text of their own; `limit` when there is no such place before it."""
    while position < limit:
        line_start = text.rfind("\n", 0, position) + 1
        line_end = text.find("\n", position)
        line_end = len(text) if line_end < 0 else line_end
        lead = _LEAD.match(text, line_start, line_end)
        lead_end = lead.end() if lead else line_start
        if position > lead_end:
            return _unescaped(text, position)
        if not _BARE_LINE.fullmatch(text, line_start, line_end):
            return lead_end
        position = line_end + 1
    return limit


def _closing(text: str, position: int, floor: int) -> int:
    """Where a mark for the end of the text before `position` can go: before trailing
    space, a table's last pipe or a heading's closing hashes, and before lines with no
    text of their own (a closing fence); `floor` when there is no such place after it."""
    while position > floor:
        while position > floor and text[position - 1] in " \t\n":
            position -= 1
        line_start = text.rfind("\n", 0, position) + 1
        lead = _LEAD.match(text, line_start, position)
        if _BARE_LINE.fullmatch(text, line_start, position) or (lead and lead.end() >= position):
            position = max(line_start, floor)
            continue
        trailing = _TRAILING.search(text, line_start, position)
        if trailing and trailing.start() > line_start:
            position = trailing.start()
            continue
        return _unescaped(text, position)
    return floor


def _unescaped(text: str, position: int) -> int:
    """Before a backslash that would otherwise escape the mark instead of what follows."""
    backslashes = len(text[:position]) - len(text[:position].rstrip("\\"))
    return position - 1 if backslashes % 2 else position


def _placed(html: str, chars: _Chars, anchor_ids: list[str], highlighting: bool) -> str:
    """The marks in rendered HTML made into tags; dropped where Markdown put them in a tag."""
    for char in chars.all():  # Pygments takes a mark in code for an error: no frame for it
        html = html.replace(f'<span class="err">{char}</span>', char)
    pieces = _TAG.split(html)  # text, tag, text, tag, …, text
    for index in range(1, len(pieces), 2):
        for form in chars.encoded():
            pieces[index] = pieces[index].replace(form, "")
    texts = "".join(pieces[0::2])
    opened, closed = texts.find(chars.open), texts.find(chars.close)
    highlighting = highlighting and 0 <= opened < closed
    anchors = iter(anchor_ids)
    inside, first = False, True
    out: list[str] = []
    for index, piece in enumerate(pieces):
        if index % 2:
            out.append(piece)
            continue
        for part in re.split(f"([{''.join(chars.all())}])", piece):
            if part == chars.anchor:
                name = next(anchors, None)
                if name is not None:
                    out.append(f'<span class="anchor" id="{name}"></span>')
            elif part in (chars.open, chars.close):
                inside = highlighting and part == chars.open
            elif inside and (part.strip() or (part and "\n" not in part)):
                id_ = f' id="{HIGHLIGHT_ID}"' if first else ""
                out.append(f'<mark class="{_MARK_CLASS}"{id_}>{part}</mark>')
                first = False
            else:
                out.append(part)
    return "".join(out)
