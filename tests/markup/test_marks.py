"""Marks in a rendered text: the span a citation points at highlighted with <mark>
wherever Markdown put its words, anchors where sections begin, and the Markdown around
them rendered as it would be without them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from agents.offline_quotes import Passage, sentences
from markup.markdown import render_markdown
from markup.marks import render_marked

NOTES = """# Zebra notes

## Habitat

The **savanna** is _wide_. It has `grass` and [acacias](https://example.com/acacia).

- open grassland
- [ ] count the herd

```python
stripes = 2
```

| animal | legs |
| --- | --- |
| zebra | 4 |

## Diet

Grass, mostly. Sometimes bark.
"""


def _marked(text: str, quoted: str) -> str:
    start = text.index(quoted)
    span = (start, start + len(quoted))
    return render_marked(text, markdown=True, highlight=span)


def _highlighted(html: str) -> str:
    return "".join(mark.get_text() for mark in BeautifulSoup(html, "html.parser")("mark"))


def _unmarked(html: str) -> str:
    """The HTML with the marks' tags taken out: what the text renders as without them."""
    return re.sub(r'</?mark[^>]*>|<span class="anchor" id="[^"]*"></span>', "", html)


@pytest.mark.parametrize(
    ("quoted", "words"),
    [
        ("The **savanna** is _wide_.", "The savanna is wide."),  # emphasis at both ends
        ("_wide_", "wide"),
        (  # a code span, a link
            "It has `grass` and [acacias](https://example.com/acacia).",
            "It has grass and acacias.",
        ),
        ("## Habitat", "Habitat"),  # a heading, from its hashes
        ("- open grassland\n- [ ] count the herd", "open grassland count the herd"),
        ("```python\nstripes = 2\n```", "stripes = 2"),  # a fence: its code
        ("| animal | legs |\n| --- | --- |\n| zebra | 4 |", "animal legs zebra 4"),
        ("Grass, mostly. Sometimes bark.\n", "Grass, mostly. Sometimes bark."),  # to the end
    ],
)
def test_a_highlight_marks_the_words_and_leaves_the_markdown_as_it_was(
    quoted: str, words: str
) -> None:
    html = _marked(NOTES, quoted)

    assert _unmarked(html) == render_markdown(NOTES)
    assert "".join(_highlighted(html).split()) == "".join(words.split())  # cells, items apart
    assert html.count('id="passage"') == 1


def test_a_highlight_of_everything_marks_every_word() -> None:
    html = _marked(NOTES, NOTES)

    assert _unmarked(html) == render_markdown(NOTES)
    soup = BeautifulSoup(html, "html.parser")
    for element in soup(["h1", "h2", "li", "p", "td", "th", "code"]):
        assert element.find("mark") is not None, element


def test_any_paragraph_or_quoted_sentence_of_the_guide_marks_and_renders_as_before() -> None:
    """The spans citations point at: passages begin at a paragraph, quotes are sentences."""
    guide = (Path(__file__).parents[2] / "knowledge" / "guide.md").read_text()
    paragraphs = [m.span() for m in re.finditer(r"(?:[^\n]|\n(?![ \t]*(?:\n|$)))+", guide)]
    quoted = [(at, at + len(text)) for at, text in sentences(Passage(0, "", None, 0, guide))]
    expected = render_markdown(guide)

    for start, end in paragraphs + quoted[::3]:
        html = render_marked(guide, markdown=True, highlight=(start, end))
        assert _unmarked(html) == expected, guide[start:end]
        assert "<mark" in html, guide[start:end]
    anchors = [(start, f"passage-{n}") for n, (start, _) in enumerate(paragraphs)]
    html = render_marked(guide, markdown=True, anchors=anchors)
    assert _unmarked(html) == expected and html.count('class="anchor"') == len(paragraphs)


def test_a_highlight_across_paragraphs_is_a_mark_in_each() -> None:
    html = _marked("First part here.\n\nSecond part there.", "here.\n\nSecond")

    assert "<p>First part <mark" in html and "here.</mark></p>" in html
    assert '<p><mark class="cited">Second</mark> part there.</p>' in html
    assert html.index('id="passage"') < html.index("here.")


def test_anchors_go_where_their_sections_begin_and_change_nothing_else() -> None:
    anchors = [(NOTES.index("## Habitat"), "passage-0"), (NOTES.index("## Diet"), "passage-3")]

    html = render_marked(NOTES, markdown=True, anchors=anchors)

    assert '<h2><span class="anchor" id="passage-0"></span>Habitat</h2>' in html
    assert '<h2><span class="anchor" id="passage-3"></span>Diet</h2>' in html
    assert _unmarked(html) == render_markdown(NOTES)


def test_plain_text_is_escaped_with_its_marks() -> None:
    text = "Line <b>one</b>\n\nLine two"

    html = render_marked(text, markdown=False, highlight=(5, 21), anchors=[(0, "passage-0")])

    assert html == (
        '<span class="anchor" id="passage-0"></span>Line '
        '<mark class="cited" id="passage">&lt;b&gt;one&lt;/b&gt;\n\nLine</mark> two'
    )


def test_a_text_holding_the_marks_characters_is_shown_unmarked() -> None:
    text = "Odd: \u2e3c\u2e3d\u2e3e\u2e41\u2e4c\u2e4d\u2e4e\u2e2e\u2e30\u2e32\u2e34\u2e35."

    html = render_marked(text, markdown=True, highlight=(0, 3), anchors=[(0, "passage-0")])

    assert html == render_markdown(text)


def test_a_mark_markdown_left_out_is_dropped_and_the_highlight_with_it() -> None:
    text = "[docs](https://example.com/a-long-address) and more."
    inside_the_address = text.index("long")

    html = render_marked(text, markdown=True, highlight=(inside_the_address, len(text)))

    assert "<mark" not in html and _unmarked(html) == render_markdown(text)
