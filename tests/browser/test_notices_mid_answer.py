"""A person in Chromium reads an answer that a System message interrupts: a time warning
while the answer streams, then the time limit stopping it. The answer stays one bubble
that says each word once, live and after a reload."""

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
STORY = [f"Chapter {i}. " for i in range(1, 200)]
WORDS_ONCE = """() => {
  const text = [...document.querySelectorAll('#messages .msg-assistant')]
    .map(el => el.innerText).join('\\n');
  return text.split('Chapter 1.').length - 1;
}"""


def test_a_time_warning_and_the_time_limit_mid_answer_leave_one_bubble(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name = f"reader-notice-{next(_people)}"
    client = stack.client(stack.create_user(name))
    assert client.patch("/api/settings/", json={"timeout_seconds": 10}).status_code == 200
    fake_provider.set_script([{"text": STORY, "chunk_delay": 0.2, "hang": True}])
    log_in(page, stack.url, name)
    page.click("text=New conversation")
    page.fill("#composer-input", "Tell me a long story")
    page.press("#composer-input", "Enter")

    warning = page.locator(".msg-system", has_text="Approaching the time limit")
    expect(warning).to_be_visible(timeout=15_000)
    stopped = page.locator(".msg-system", has_text="time limit")
    expect(page.locator("#gauges[data-status=finished]")).to_be_attached(timeout=20_000)

    def one_bubble() -> None:
        expect(page.locator("#messages .msg-assistant")).to_have_count(1)
        assert page.evaluate(WORDS_ONCE) == 1

    one_bubble()
    assert stopped.count() >= 1
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"conversation-time-limit-{look}.png"))
    page.reload()
    expect(page.locator(".msg-assistant", has_text="Chapter 1.")).to_be_visible()
    one_bubble()
