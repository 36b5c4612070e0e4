"""An answer's Markdown as it streams, sent as cheaply as it can be shown right.

The text so far is split into *finished blocks* (everything before the last blank
line outside a code fence: they render the same whatever comes next) and the
*growing block* after them. A finished block is rendered once and put before the
growing one. The growing block is rendered again when a piece of text could change
its shape (a newline, `*`, a backtick, `[`, a dollar...); a piece of plain words in the
middle of a line of plain words cannot, so it is only added, escaped, at the end of the
innermost block element holding the text (`<p>`, `<li>`, a heading). Most pieces are plain
words: they cost their own bytes, not the block's. Everything is rendered by
`render_markdown`, sanitised exactly as the final answer, which replaces it all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.html import escape

from markup.markdown import render_markdown

# Characters a piece of text must not hold to be added without rendering again:
# emphasis, code, links, HTML and entities, escapes, tables, headings' closing #s, maths.
_SHAPING = frozenset("*_`[]<>&#|\\~$\n\r\t")
# The closing tags a rendering ends with, block elements only: text added at the end
# goes inside the innermost of them.
_BLOCK_END = re.compile(r"((?:</(?:p|li|h[1-6]|blockquote|ul|ol|code|pre|div)>\s*)+)$")
# Not `<code>`: a code block ends with a newline, so added words would start a line.
_HOLDS_TEXT = re.compile(r"p|li|h[1-6]")
_CLOSING = re.compile(r"</(\w+)>")
# A line that starts a list item (a bullet, or a number and . or )).
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")


@dataclass(frozen=True)
class Swap:
    """One change to the page: `html` put at `target` (a CSS selector) by `strategy`."""

    target: str
    strategy: str
    html: str


class StreamingAnswer:
    """The text of one answer as it streams into the element `element_id`."""

    def __init__(self, element_id: str) -> None:
        self.element_id = element_id
        self.text = ""
        self.settled = 0  # text[:settled] is on the page as finished blocks
        self._insert_at: str | None = None  # where plain words go, if they can
        self._carried = ""  # spaces at the end, not shown until a word follows
        # The line being written so far: whether it is plain and holds a word (kept up
        # piece by piece: a long line is not read again for every word).
        self._line_plain = True
        self._line_has_word = False

    @property
    def tail_id(self) -> str:
        return f"{self.element_id}-tail"

    def start(self, text: str) -> tuple[str, str]:
        """The first piece: (finished blocks, growing block) as HTML."""
        self.text = text
        self.settled = settled_end(text, 0)
        self._follow_line(text)
        return (
            render_markdown(text[: self.settled]) if self.settled else "",
            self._render_tail(),
        )

    def add(self, piece: str) -> list[Swap]:
        """The changes that show `piece` after the text so far."""
        mid_plain_line = self._line_plain and self._line_has_word
        self.text += piece
        self._follow_line(piece)
        # Only a newline can finish a block (a blank line ends one).
        settled = settled_end(self.text, self.settled) if "\n" in piece else self.settled
        tail = f"#{self.tail_id}"
        if settled > self.settled:  # a block finished: it goes before the growing one
            finished = render_markdown(self.text[self.settled : settled])
            self.settled = settled
            return [
                Swap(tail, "beforebegin", finished),
                Swap(tail, "innerHTML", self._render_tail()),
            ]
        if self._insert_at and mid_plain_line and _plain(piece):
            shown = self._carried + piece
            words = shown.rstrip(" ")
            self._carried = shown[len(words) :]
            return [Swap(self._insert_at, "beforeend", escape(words))] if words else []
        return [Swap(tail, "innerHTML", self._render_tail())]

    def _follow_line(self, piece: str) -> None:
        if "\n" in piece:
            piece = piece[piece.rfind("\n") + 1 :]
            self._line_plain, self._line_has_word = True, False
        self._line_plain = self._line_plain and _plain(piece)
        self._line_has_word = self._line_has_word or any(map(str.isalpha, piece))

    def _render_tail(self) -> str:
        tail = self.text[self.settled :]
        html = render_markdown(tail)
        self._insert_at = _insertion_point(self.tail_id, html)
        self._carried = tail[len(tail.rstrip(" ")) :]  # never a newline: only spaces
        return html


def _plain(piece: str) -> bool:
    return not _SHAPING.intersection(piece)


def _insertion_point(tail_id: str, html: str) -> str | None:
    """A selector for the element whose text ends `html` (the growing block as
    rendered), or None when it does not end in text inside a block element."""
    end = _BLOCK_END.search(html)
    if end is None or end.start() == 0 or html[end.start() - 1] == ">":
        return None
    tags = _CLOSING.findall(end.group(1))  # innermost first
    if not _HOLDS_TEXT.fullmatch(tags[0]):
        return None
    return f"#{tail_id}" + "".join(f" > {tag}:last-child" for tag in reversed(tags))


def settled_end(text: str, start: int) -> int:
    """Where the finished Markdown blocks of `text` end, at or after `start` (a block
    boundary): after the last blank line that is outside a code fence. Blocks before it
    render the same whatever text comes next. Lists and indented code are the
    exceptions: an item or an indented line after a blank line goes on with them, so
    a blank line after one counts only once the next line shows it does not."""
    end, fence, offset = start, "", start
    in_list = False  # a list item or indented code since `end`: it may go on
    pending: int | None = None  # the end of such a blank line, until the next line says
    for line in text[start:].splitlines(keepends=True):
        offset += len(line)
        if not line.endswith("\n"):
            break  # a line still being written
        if pending is not None and not fence and line.strip():
            if line[0] in " \t" or _LIST_ITEM.match(line):
                pending = None  # the list goes on
            else:
                end, pending, in_list = pending, None, False
        stripped = line.lstrip(" ")
        marker = stripped[:3]
        if len(line) - len(stripped) < 4 and marker in ("```", "~~~"):
            if not fence:
                fence = marker
            elif marker == fence and not stripped[3:].strip(marker[0] + " \n"):
                fence = ""
        elif fence:
            continue
        elif not line.strip():
            if in_list:
                pending = offset
            else:
                end = offset
        elif line[0] == "\t" or line.startswith("    ") or _LIST_ITEM.match(line):
            in_list = True
    return end
