"""On a phone, every button and link of a conversation is big enough to touch: at least
24 by 24 CSS pixels (WCAG 2.2's target size), or set in a line of text."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.testing.fake_server import FakeServer
from tests.browser.conftest import log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser
_people = itertools.count(1)
SMALL_TARGETS = """() => [...document.querySelectorAll('button, a[href], select, summary')]
  .filter(el => el.offsetParent !== null && !el.closest('.msg-body p, .msg-body li'))
  .map(el => [el, el.getBoundingClientRect()])
  .filter(([el, box]) => box.width < 24 || box.height < 24)
  .map(([el, box]) => `${el.outerHTML.slice(0, 60)} ${box.width | 0}x${box.height | 0}`)"""


def test_every_target_of_a_conversation_is_big_enough_on_a_phone(
    page: Any, stack: OracleStack, fake_provider: FakeServer
) -> None:
    name = f"thumbs-{next(_people)}"
    stack.create_user(name)
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, stack.url, name)
    page.goto(f"{stack.url}/")
    fake_provider.set_script([
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]},
        {"text": ["It is 42, see https://example.com/.\n\n```python\nprint(42)\n```"]},
    ])  # fmt: skip
    page.fill("#composer-input", "What is 6*7?")
    page.press("#composer-input", "Enter")
    expect(page.locator(".msg-assistant .copy-answer")).to_be_visible(timeout=15_000)
    page.get_by_role("button", name="Regenerate this answer").wait_for()

    assert page.evaluate(SMALL_TARGETS) == []
