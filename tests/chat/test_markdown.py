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


def test_a_citation_to_a_passage_stays_a_link_that_opens_in_a_new_tab() -> None:
    html = render_markdown("— [*Zebra notes*, Sleep](/documents/3/?start=40&length=75#passage)")

    assert (
        '<a href="/documents/3/?start=40&amp;length=75#passage" target="_blank" '
        'rel="noopener noreferrer nofollow"><em>Zebra notes</em>, Sleep</a>'
    ) in html
