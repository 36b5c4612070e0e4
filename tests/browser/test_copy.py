"""A person in Chromium copies what the Oracle wrote: Copy under an answer gives the
Markdown itself (headings, lists, tables, fences with their language), never the page's
button labels; Copy on a code block gives the code alone. Live and after a reload."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.testing.fake_server import FakeServer
from tests.browser.conftest import each_look, log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser
_people = itertools.count(1)
CODE = 'def greet(name):\n    return f"Hello, {name}!"\n'
ANSWER = (
    "## A greeting\n\n"
    "Two steps:\n\n"
    "1. Define it.\n"
    "2. Call it with **a name**.\n\n"
    "| Call | Result |\n"
    "| --- | --- |\n"
    '| `greet("Ada")` | Hello, Ada! |\n\n'
    f"```python\n{CODE}```\n\n"
    "- [x] Written\n"
    "- [ ] Tested, see https://example.com/tests\n\n"
    "> Quoted, with a [link](https://example.com/)."
)


def _clipboard(page: Any) -> str:
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_copy_gives_the_markdown_and_a_code_blocks_copy_the_code(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name = f"copier-{next(_people)}"
    stack.create_user(name)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=stack.url)
    log_in(page, stack.url, name)
    page.click("text=New conversation")
    fake_provider.set_script([{"text": [ANSWER[:40], ANSWER[40:120], ANSWER[120:]]}])
    page.fill("#composer-input", "Write a greeting")
    page.press("#composer-input", "Enter")
    answer = page.locator(".msg-assistant", has_text="A greeting")
    expect(answer.locator(".copy-answer")).to_be_visible()
    expect(answer.locator('a[href="https://example.com/tests"][target="_blank"]')).to_be_visible()
    expect(answer.locator("input[type=checkbox]:checked")).to_be_disabled()
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"conversation-markdown-{look}.png"), full_page=True)

    for shown in ("live", "reloaded"):
        answer.get_by_role("button", name="Copy answer").click()
        expect(answer.get_by_role("button", name="Copy answer")).to_have_text("Copied")
        assert _clipboard(page) == ANSWER, shown

        answer.get_by_role("button", name="Copy code").click()
        assert _clipboard(page) == CODE, shown
        page.reload()
        expect(answer.locator(".copy-answer")).to_be_visible()
