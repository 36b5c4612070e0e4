"""A person in Chromium: sends a message, watches it stream, presses Stop, reads why."""

from __future__ import annotations

import os
from pathlib import Path
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
    assert page.locator("#announcer").get_attribute("aria-live") == "polite"
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


def test_a_limit_is_announced_ahead_and_its_stop_says_what_was_counted(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Any
) -> None:
    client = stack.client(stack.create_user("tariq"))
    assert client.patch("/api/settings/", json={"max_iterations": 3}).status_code == 200
    step = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]}
    fake_provider.set_script([step, step, {"text": ["It ", "is ", "42."]}])
    log_in(page, stack.url, "tariq")
    page.click("text=New conversation")
    page.fill("#composer-input", "What is 6*7, checked twice?")
    page.press("#composer-input", "Enter")

    page.wait_for_selector(".msg-system.severity-warning >> text=Press Continue")
    notices = page.locator(".msg-system").all_inner_texts()
    assert "Approaching the iteration limit (1 of 3)" in notices[0]  # two calls ahead
    assert "iterations: 3 of 3" in notices[-1]
    assert (
        "Stopped: reached the iteration limit (3 of 3)"
        in page.locator(".msg-assistant").last.inner_text()
    )

    folder = Path(os.environ.get("ORACLE_VAR_DIR", tmp_path)) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for device, size in (("desktop", (1280, 900)), ("phone", (390, 844))):
            page.set_viewport_size({"width": size[0], "height": size[1]})
            page.wait_for_timeout(400)  # the sidebar folds away with a transition
            page.screenshot(path=str(folder / f"limit-stop-{scheme}-{device}.png"), full_page=True)
