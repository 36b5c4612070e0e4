"""Markdown from the model or the user, rendered server-side and made inert.

markdown-it-py's `js-default` preset never passes raw HTML through and refuses
`javascript:`-style links; nh3 then keeps only a small allow-list of tags and
attributes (no event handlers, no `hx-*`, no `style`), so nothing a model writes
can run script or drive htmx. Code blocks are highlighted with Pygments; bare web
addresses become links (linkify-it-py), task lists disabled checkboxes (mdit-py-plugins),
and links open in a new tab. Maths between dollars (`$x^2$` inline, `$$...$$` display)
is marked as escaped TeX in `.math` elements that KaTeX typesets in the page
(static/js/maths.js); a dollar next to a space or a digit does not open or close it, so
prices ("$5 and $10") stay text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from html import escape
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.dollarmath.index import math_inline_dollar
from mdit_py_plugins.tasklists import tasklists_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_TAGS = {
    "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "span", "div", "input",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "span": {"class"},
    "div": {"class"},
    "code": {"class"},
    "th": {"align"},
    "td": {"align"},
    "ol": {"start"},
    "ul": {"class"},
    "li": {"class"},
    "input": {"class", "type", "checked", "disabled"},  # a task list's boxes only
}
# An <input> is kept only as a task list's box, which nobody can tick.
_TASK_BOX = {"class": "task-list-item-checkbox", "type": "checkbox", "disabled": "disabled"}


def _attribute(element: str, attribute: str, value: str) -> str | None:
    if element != "input":
        return value
    if attribute == "checked":
        return "checked"
    return value if _TASK_BOX.get(attribute) == value else None


_STRAY_INPUT = re.compile(r'<input(?![^>]*type="checkbox")[^>]*>')
_FORMATTER = HtmlFormatter(nowrap=True)


def _highlight(code: str, language: str, _attrs: str) -> str:
    try:
        lexer = get_lexer_by_name(language) if language else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return ""  # markdown-it escapes the code itself
    return str(highlight(code, lexer, _FORMATTER))


def _fence(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """A fenced code block under a head naming its language (the page adds Copy there)."""
    info = tokens[idx].info.strip()
    language = info.split(maxsplit=1)[0] if info else ""
    code = renderer.fence(tokens, idx, options, env)
    label = escape(language or "text")
    head = f'<div class="code-head"><span class="code-lang">{label}</span></div>'
    return f'<div class="code-block">{head}{code}</div>'


def _display_maths_in_a_line(
    _renderer: Any, tokens: Sequence[Token], idx: int, _options: Any, _env: Any
) -> str:
    """`$$...$$` inside a sentence: display maths in a span, so its paragraph stays whole."""
    return f'<span class="math display">{escape(tokens[idx].content.strip())}</span>'


# The plugin's own inline rule, as `_markdown` sets it up but for digits, which
# `_inline_maths_outside_code` checks itself: the plugin reads the character before a
# dollar that opens the text as the text's last one (`src[pos - 1]` at 0), so a digit
# at the very end ("$x^2$ is at least 0") took the maths away from the whole text.
_INLINE_MATHS = math_inline_dollar(allow_space=False, allow_digits=True, allow_double=True)


def _inline_maths_outside_code(state: StateInline, silent: bool) -> bool:
    """Inline maths that holds no backtick and has no digit next to its dollars: in
    "$10, or `$HOME`" the dollars belong to a price and a code span, not to a formula
    between them, and in "$5-$10" to two prices."""
    start = state.pos
    if start > 0 and state.src[start - 1].isdigit():
        return False
    if not _INLINE_MATHS(state, True):  # silent: finds where it ends, makes nothing
        return False
    end, state.pos = state.pos, start
    if "`" in state.src[start:end] or state.src[end : end + 1].isdigit():
        return False
    return _INLINE_MATHS(state, silent)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    options = {"highlight": _highlight, "linkify": True}  # bare addresses become links
    markdown = MarkdownIt("js-default", options).enable(["table", "linkify"])
    markdown.use(tasklists_plugin)
    markdown.use(
        dollarmath_plugin,
        allow_labels=False,  # no ids or anchors of the model's making
        allow_space=False,  # "$5 and $10": a space inside either dollar, so no maths
        allow_digits=False,  # "$5-$10": a digit after the closing dollar, so no maths
        allow_blank_lines=False,  # as in TeX; and a streamed answer's blocks end at one
        double_inline=True,
    )
    markdown.inline.ruler.at("math_inline", _inline_maths_outside_code)
    markdown.add_render_rule("math_inline_double", _display_maths_in_a_line)
    markdown.add_render_rule("fence", _fence)
    return markdown


def render_markdown(text: str) -> str:
    """Safe HTML for `text` (Markdown): links open in a new tab with no referrer."""
    html = _markdown().render(text)
    clean = nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        attribute_filter=_attribute,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"a": {"target": "_blank"}},
    )
    # A box whose type the filter dropped is no box: gone with what was left of it.
    return _STRAY_INPUT.sub("", clean)
