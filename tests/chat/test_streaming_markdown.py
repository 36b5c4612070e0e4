"""An answer streamed piece by piece shows, at every moment, what its text so far
renders to, while plain words cost only their own bytes."""

from __future__ import annotations

import html
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from chat.streaming import _BLOCK_END, StreamingAnswer, Swap
from markup.markdown import render_markdown

PIECES = [
    "Hello", " world", " ", "  ", "and", " more", ".", ",", "!", "?", "1", "2.", " 3)",
    "\n", "\n\n", "- ", "* ", "1. ", "# ", "## ", "> ", "**", "*", "_", "`", "```", "```python\n",
    "[link](http://example.com)", "<b>", "&amp;", "|", " | ", "---", "===", "\\", "~~",
    "    ", "x = 1", "café", "'quoted'", '"double"', "$", "$$", "$x^2$", "x^2", "$5",
]  # fmt: skip


def shown(page: dict[str, str], swaps: list[Swap], answer: StreamingAnswer) -> None:
    """Apply the swaps as the browser would, on the page's finished and growing parts."""
    for swap in swaps:
        if swap.strategy == "beforebegin":
            page["settled"] += swap.html
        elif swap.strategy == "innerHTML":
            assert swap.target == f"#{answer.tail_id}"
            page["tail"] = swap.html
        else:  # words added at the end of the growing block's innermost element
            assert swap.strategy == "beforeend" and "<" not in swap.html
            end = _BLOCK_END.search(page["tail"])
            assert end is not None
            page["tail"] = page["tail"][: end.start()] + swap.html + page["tail"][end.start() :]


def looks(text: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=40))
@example(["- ", "\n\n", "- ", "\n\n"])  # one list, its items apart: not two lists
@example(["para\n", "- a\n\n", "  more\n\n", "- b"])
@example(["\t", "Hello", "\n\n", "\t", "Hello", "\n\n"])  # one indented code block
@example(["Area", " $x", " y$", " and", " more"])  # maths closed by a piece of words
@example(["$x^2$", "\n", "Hello", "x = 1"])  # maths opening the text, a digit ending it
def test_every_moment_shows_what_the_text_so_far_renders_to(pieces: list[str]) -> None:
    answer = StreamingAnswer("a1")
    settled, tail = answer.start(pieces[0])
    page = {"settled": settled, "tail": tail}
    for piece in pieces[1:]:
        shown(page, answer.add(piece), answer)
        expected = render_markdown(answer.text[: answer.settled])
        assert looks(page["settled"]) == looks(expected)
        assert looks(page["tail"]) == looks(render_markdown(answer.text[answer.settled :]))


def test_plain_words_cost_their_own_bytes_not_the_paragraphs() -> None:
    answer = StreamingAnswer("a1")
    answer.start("A long paragraph begins")
    sent = [answer.add(f" word{i}") for i in range(500)]

    assert all(len(swaps) == 1 and swaps[0].strategy == "beforeend" for swaps in sent)
    assert sum(len(s.html) for swaps in sent for s in swaps) < 500 * 10
    assert sent[-1][0].target == "#a1-tail > p:last-child"


def test_a_list_item_grows_inside_its_item() -> None:
    answer = StreamingAnswer("a1")
    answer.start("- one\n- tw")

    (swap,) = answer.add("o and three")

    assert swap == Swap("#a1-tail > ul:last-child > li:last-child", "beforeend", "o and three")
