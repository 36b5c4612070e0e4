"""A person in Chromium: sends a message, watches it stream, presses Stop, reads why."""

from __future__ import annotations

from typing import Any

import pytest

from agents.testing.fake_server import FakeServer
from tests.browser.conftest import log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser

STORY = [f"Chapter {i}. " for i in range(1, 40)]


def test_a_message_streams_and_stop_shows_the_reason(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Any
) -> None:
    stack.create_user("sofia")
    fake_provider.set_script([{"text": STORY, "chunk_delay": 0.25, "hang": True}])
    log_in(page, stack.url, "sofia")
    page.click("text=New conversation")
    page.wait_for_selector("#composer-input")

    page.fill("#composer-input", "Tell me a long story")
    page.press("#composer-input", "Enter")

    page.wait_for_selector(".msg-user >> text=Tell me a long story")
    page.wait_for_selector(".msg-assistant >> text=Chapter 3.")  # it streams
    assert page.locator("#messages").get_attribute("aria-live") == "polite"
    page.click("#run-controls button.stop")

    notice = page.wait_for_selector(".msg-system")
    assert "You stopped the run." in notice.inner_text()
    assert notice.query_selector("button >> text=Continue") is not None
    badge = page.wait_for_selector(".msg-assistant .badge")
    assert badge.inner_text() == "Stopped by you"
    assert "Chapter 1." in page.locator(".msg-assistant").last.inner_text()
    assert page.locator("#run-controls button.stop").count() == 0
    page.screenshot(path=str(tmp_path / "stopped.png"), full_page=True)

    page.reload()  # the history keeps the answer, the reason and the notice
    page.wait_for_selector(".msg-assistant .badge >> text=Stopped by you")
    assert "Chapter 1." in page.locator(".msg-assistant").last.inner_text()
    assert page.locator(".msg-system").count() >= 1
