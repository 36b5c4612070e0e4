"""Markdown from the model or the user, rendered server-side and made inert.

markdown-it-py's `js-default` preset never passes raw HTML through and refuses
`javascript:`-style links; nh3 then keeps only a small allow-list of tags and
attributes (no event handlers, no `hx-*`, no `style`), so nothing a model writes
can run script or drive htmx. Code blocks are highlighted with Pygments; bare web
addresses become links (linkify-it-py), task lists disabled checkboxes (mdit-py-plugins),
and links open in a new tab.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from html import escape
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token
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


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    options = {"highlight": _highlight, "linkify": True}  # bare addresses become links
    markdown = MarkdownIt("js-default", options).enable(["table", "linkify"])
    markdown.use(tasklists_plugin)
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
