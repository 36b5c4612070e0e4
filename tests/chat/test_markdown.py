"""What the Oracle writes reads as Markdown should: bare web addresses are links, links
open in a new tab (a streaming run stays on screen), task lists are checkboxes; all of it
still through the sanitiser."""

from __future__ import annotations

from markup.markdown import render_markdown


def test_a_bare_web_address_is_a_link_that_opens_in_a_new_tab() -> None:
    html = render_markdown("See https://example.com/docs for more.")

    assert (
        '<a href="https://example.com/docs" target="_blank" rel="noopener noreferrer nofollow">'
        "https://example.com/docs</a>"
    ) in html


def test_a_written_link_opens_in_a_new_tab_too() -> None:
    html = render_markdown("[the docs](https://example.com/)")

    assert 'target="_blank"' in html and 'rel="noopener noreferrer nofollow"' in html


def test_a_task_list_is_checkboxes_nobody_can_tick() -> None:
    html = render_markdown("- [ ] to do\n- [x] done\n")

    assert html.count('type="checkbox"') == 2
    assert html.count('disabled="disabled"') == 2
    assert html.count('checked="checked"') == 1
    assert 'class="contains-task-list"' in html


def test_only_task_list_checkboxes_get_through() -> None:
    html = render_markdown('<input type="text" onfocus="alert(1)" autofocus>\n\n- [x] ok')

    assert "&lt;input" in html  # shown as the text it is
    assert html.count("<input") == 1 and '<input type="text"' not in html


def test_a_link_to_script_is_still_no_link() -> None:
    html = render_markdown("[click](javascript:alert(1)) and www.example.com")

    assert 'href="javascript' not in html
    assert '<a href="http://www.example.com"' in html


# --- maths: marked here, typeset by KaTeX in the page -------------------------------------


def test_dollar_maths_is_marked_inline_and_on_its_own_lines() -> None:
    html = render_markdown(
        "Euler: $e^{i\\pi} + 1 = 0$.\n\n$$\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n$$\n"
    )

    assert '<span class="math inline">e^{i\\pi} + 1 = 0</span>' in html
    assert '<div class="math block">\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n</div>' in html


def test_double_dollars_inside_a_sentence_are_display_maths_that_stays_in_its_paragraph() -> None:
    html = render_markdown("So $$a^2 + b^2 = c^2$$ holds.")

    assert html.startswith("<p>So ") and html.rstrip().endswith("holds.</p>")
    assert '<span class="math display">a^2 + b^2 = c^2</span>' in html


def test_prices_are_not_maths() -> None:
    for text in (
        "It costs $5 and $10.",
        "Between $5 and $ 10",
        "Pay $3.50, or $4 with tip",
        "$5-$10",
        "It costs $10, or set `$PRICE` to what you like",
    ):
        html = render_markdown(text)

        assert "math" not in html, text
        assert html.count("$") == text.count("$"), text


def test_maths_that_opens_the_text_stays_maths_whatever_digit_ends_it() -> None:
    for text in ("$x^2$ is at least 0", "$x^2$\nand then x = 1"):
        html = render_markdown(text)

        assert '<span class="math inline">x^2</span>' in html, text
        assert text[-1] in html


def test_code_keeps_its_dollars() -> None:
    html = render_markdown("Run `echo $HOME$` then:\n\n```\necho $x$ and\n$$\ny\n$$\n```\n")

    assert "math" not in html
    assert "<code>echo $HOME$</code>" in html
    assert "echo $x$ and\n$$\ny\n$$" in html


def test_an_escaped_dollar_is_a_dollar() -> None:
    html = render_markdown("Not a formula: \\$x$ here.")

    assert "math" not in html and "$x$" in html


def test_maths_is_text_to_the_sanitiser() -> None:
    html = render_markdown(
        "$a<b><img src=x onerror=alert(1)>$ and $\\href{javascript:alert(1)}{x}$\n\n"
        '$$\n</div><script>alert(1)</script><a href="javascript:alert(1)">x</a>\n$$\n'
    )

    assert "<img" not in html and "<script" not in html and "<a " not in html
    assert '<span class="math inline">a&lt;b&gt;&lt;img src=x onerror=alert(1)&gt;</span>' in html
    assert '<span class="math inline">\\href{javascript:alert(1)}{x}</span>' in html
    assert html.count('<div class="math block">') == 1


def test_a_citation_to_a_passage_stays_a_link_that_opens_in_a_new_tab() -> None:
    html = render_markdown("— [*Zebra notes*, Sleep](/documents/3/?start=40&length=75#passage)")

    assert (
        '<a href="/documents/3/?start=40&amp;length=75#passage" target="_blank" '
        'rel="noopener noreferrer nofollow"><em>Zebra notes</em>, Sleep</a>'
    ) in html
