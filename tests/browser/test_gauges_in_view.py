"""A person reading an answer longer than the screen still sees the run's gauges, and on a
phone the header and the gauges wrap: nothing of them is hidden off to the side."""

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
LONG = [f"Paragraph {i}: a line of the answer.\n\n" for i in range(1, 80)]
IN_VIEW = """el => {
  const box = el.getBoundingClientRect(), main = document.querySelector('.main');
  const top = main.getBoundingClientRect().top;
  return box.height > 0 && box.top >= top - 1 && box.bottom <= innerHeight;
}"""
NOTHING_HIDDEN = "el => el.scrollWidth <= el.clientWidth + 1"


def test_the_gauges_stay_in_view_and_wrap_on_a_phone(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name = f"scroller-{next(_people)}"
    stack.create_user(name)
    log_in(page, stack.url, name)
    page.click("text=New conversation")
    fake_provider.set_script([{"text": LONG, "chunk_delay": 0.05, "hang": True}])
    page.fill("#composer-input", "Write at length")
    page.press("#composer-input", "Enter")
    expect(page.locator(".msg-assistant", has_text="Paragraph 60:")).to_be_visible(timeout=20_000)
    gauges = page.locator("#gauges")

    for folder, look in each_look(page, tmp_path):
        page.locator(".main").evaluate("el => el.scrollTo(0, el.scrollHeight)")
        page.wait_for_timeout(200)
        assert gauges.evaluate(IN_VIEW), look  # above the answer's end, still in sight
        assert gauges.evaluate(NOTHING_HIDDEN), look
        assert page.locator(".chat-header").evaluate(NOTHING_HIDDEN), look
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth"), look
        page.screenshot(path=str(folder / f"conversation-gauges-in-view-{look}.png"))
    page.locator("#run-controls .stop").click()


def test_the_time_gauge_keeps_counting_after_a_reload(
    page: Any, stack: OracleStack, fake_provider: FakeServer
) -> None:
    name = f"clock-watcher-{next(_people)}"
    stack.create_user(name)
    log_in(page, stack.url, name)
    page.click("text=New conversation")
    fake_provider.set_script([{"text": ["Thinking "], "chunk_delay": 0.2, "hang": True}])
    page.fill("#composer-input", "Take your time")
    page.press("#composer-input", "Enter")
    expect(page.locator(".msg-assistant", has_text="Thinking")).to_be_visible()
    page.wait_for_timeout(4_000)
    seconds = page.locator("#gauge-elapsed_s .gauge-figures")

    page.reload()
    expect(seconds).to_be_visible()
    first = int(seconds.inner_text().split(" / ")[0])
    page.wait_for_timeout(2_500)
    then = int(seconds.inner_text().split(" / ")[0])

    assert first >= 4  # the time the run has been going, not its last saved figure
    assert then >= first + 2  # and it goes on counting
    page.locator("#run-controls .stop").click()
