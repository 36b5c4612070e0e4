"""A person with a conversation open in two tabs: what either tab sends shows in both,
the question before its answer; what a run no longer offers (Continue, Regenerate) goes
from both; a regenerated answer shows as versions in both; no tab logs an error."""

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
SLOW = [f"Step {i}. " for i in range(1, 25)]


def _errors_of(tab: Any) -> list[str]:
    errors: list[str] = []
    tab.on("console", lambda message: message.type == "error" and errors.append(message.text))
    tab.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def _send(tab: Any, text: str) -> None:
    tab.fill("#composer-input", text)
    tab.press("#composer-input", "Enter")


def test_two_tabs_on_one_conversation_show_the_same_conversation(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name = f"two-tabs-{next(_people)}"
    stack.create_user(name)
    log_in(page, stack.url, name)
    page.click("text=New conversation")
    fake_provider.set_script([{"text": ["First answer."]}])
    _send(page, "First question")
    expect(page.locator(".msg-assistant", has_text="First answer.")).to_be_visible()
    other = page.context.new_page()
    other.goto(page.url)
    expect(other.locator(".msg-assistant", has_text="First answer.")).to_be_visible()
    other.wait_for_timeout(1200)  # its socket is open and synced
    errors = _errors_of(page) + _errors_of(other)
    errors_here, errors_there = _errors_of(page), _errors_of(other)

    # a question sent from one tab shows in the other before its answer is done
    fake_provider.set_script([{"text": SLOW, "chunk_delay": 0.25}])
    _send(page, "Second question")
    expect(other.locator(".msg-user", has_text="Second question")).to_be_visible()
    expect(other.locator("#run-controls .stop")).to_be_visible()  # still answering
    expect(other.locator(".msg-assistant", has_text="Step 24.")).to_be_visible(timeout=20_000)
    for tab in (page, other):
        expect(tab.locator(".msg-user")).to_have_count(2)
        expect(tab.locator("#run-controls .stop")).to_have_count(0)
        expect(tab.locator(".regenerate:visible")).to_have_count(1)  # the last answer's
    for folder, look in each_look(other, tmp_path):
        other.screenshot(path=str(folder / f"conversation-other-tab-{look}.png"))

    # stopped in one tab: Continue in both; pressed in one, gone from both
    fake_provider.set_script([{"text": SLOW, "chunk_delay": 0.2, "hang": True}])
    _send(other, "Third question")
    expect(page.locator(".msg-user", has_text="Third question")).to_be_visible()
    expect(page.locator(".msg-assistant", has_text="Step 3.")).to_be_visible()
    page.locator("#run-controls .stop").click()
    for tab in (page, other):
        expect(tab.locator(".system-actions button", has_text="Continue")).to_be_visible()
    fake_provider.set_script([{"text": ["Carried on."]}])
    other.locator(".system-actions button", has_text="Continue").click()
    for tab in (page, other):
        expect(tab.locator(".msg-assistant", has_text="Carried on.")).to_be_visible()
        expect(tab.locator(".system-actions button", has_text="Continue")).to_have_count(0)

    # regenerated in one tab: both show the two versions, and one Regenerate
    fake_provider.set_script([{"text": ["Carried on again."]}])
    page.get_by_role("button", name="Regenerate this answer").click()
    for tab in (page, other):
        expect(tab.locator(".msg-assistant", has_text="Carried on again.")).to_be_visible()
        expect(tab.locator(".version-number:visible").last).to_have_text("2 / 2")
        expect(tab.locator(".regenerate:visible")).to_have_count(1)
        expect(tab.locator(".msg-user", has_text="Third question")).to_have_count(1)

    assert errors == [] and errors_here == [] and errors_there == []
