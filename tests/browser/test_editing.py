"""A person in Chromium edits a message they sent: the box shows what they type, any
message of the conversation can be edited, and the conversation branches there with
the earlier branch kept whole behind its version switch."""

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


def _ask(page: Any, provider: FakeServer, question: str, answer: str) -> None:
    provider.set_script([{"text": [answer]}])
    page.fill("#composer-input", question)
    page.press("#composer-input", "Enter")
    expect(page.locator(".msg-assistant", has_text=answer)).to_be_visible()
    expect(page.locator("#run-controls .stop")).to_have_count(0)


def _user_message(page: Any, text: str) -> Any:
    return page.locator(".msg-user", has=page.locator(".msg-body", has_text=text))


def _asked(provider: FakeServer) -> list[str]:
    """What the model was last given: its messages' text, the system prompt left out."""
    messages = provider.requests[-1]["messages"]
    return [m["content"] for m in messages if m["role"] in ("user", "assistant")]


def test_an_earlier_message_is_edited_in_a_box_that_shows_it_and_the_conversation_branches(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name = f"editor-{next(_people)}"
    stack.create_user(name)
    log_in(page, stack.url, name)
    page.click("text=New conversation")
    _ask(page, fake_provider, "One", "Eins.")
    _ask(page, fake_provider, "Two", "Zwei.")
    _ask(page, fake_provider, "Three", "Drei.")

    # with the keyboard alone: Edit on the second message opens its text, in view
    _user_message(page, "Two").get_by_role("button", name="Edit this message").focus()
    page.keyboard.press("Enter")
    box = page.get_by_role("textbox", name="Edit your message")
    expect(box).to_be_focused()
    expect(box).to_have_value("Two")
    size = box.bounding_box()
    assert size is not None and size["width"] > 200 and size["height"] > 40
    for folder, look in each_look(page, tmp_path):
        box.scroll_into_view_if_needed()
        page.screenshot(path=str(folder / f"conversation-edit-{look}.png"))
    page.keyboard.press("Control+A")
    page.keyboard.type("Deux")

    fake_provider.set_script([{"text": ["Zwei bis."]}])
    page.keyboard.press("Enter")

    expect(page.locator(".msg-assistant", has_text="Zwei bis.")).to_be_visible()
    assert _asked(fake_provider) == ["One", "Eins.", "Deux"]
    for gone in ("Two", "Three"):
        expect(_user_message(page, gone)).to_be_hidden()
    expect(page.locator(".msg-assistant", has_text="Drei.")).to_be_hidden()

    # Earlier version shows the earlier branch whole: the second message as it was and what followed
    _user_message(page, "Deux").get_by_role("button", name="Earlier version").focus()
    page.keyboard.press("Enter")
    for shown in ("Two", "Three"):
        expect(_user_message(page, shown)).to_be_visible()
    expect(page.locator(".msg-assistant", has_text="Drei.")).to_be_visible()
    expect(page.locator(".msg-assistant", has_text="Zwei bis.")).to_be_hidden()
    edit_three = _user_message(page, "Three").get_by_role("button", name="Edit this message")
    expect(edit_three).to_have_count(0)
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"conversation-branch-{look}.png"))

    # a message sent meanwhile goes on the latest branch, which comes back into view
    _ask(page, fake_provider, "Four", "Vier.")
    assert _asked(fake_provider) == ["One", "Eins.", "Deux", "Zwei bis.", "Four"]
    expect(_user_message(page, "Three")).to_be_hidden()
    expect(_user_message(page, "Deux")).to_be_visible()

    page.reload()
    expect(page.locator(".msg-assistant", has_text="Vier.")).to_be_visible()
    expect(_user_message(page, "Three")).to_be_hidden()
    expect(page.locator(".msg-user .edit-message:visible")).to_have_count(3)  # One, Deux, Four
