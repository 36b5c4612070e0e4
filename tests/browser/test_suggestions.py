"""A new user on the empty start page sees a few suggested prompts; choosing one puts it
in the composer, ready to send or change, with the keyboard as with the mouse."""

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


def test_a_suggested_prompt_fills_the_composer_and_starts_the_conversation(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name = f"newcomer-{next(_people)}"
    stack.create_user(name)
    log_in(page, stack.url, name)
    page.goto(f"{stack.url}/")
    suggestions = page.get_by_role("group", name="Suggested prompts").get_by_role("button")
    expect(suggestions).to_have_count(4)
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"start-suggestions-{look}.png"))

    chosen = suggestions.nth(1)
    prompt = chosen.inner_text()
    chosen.focus()
    page.keyboard.press("Enter")

    composer = page.locator("#composer-input")
    expect(composer).to_have_value(prompt)
    expect(composer).to_be_focused()
    fake_provider.set_script([{"text": ["Here you are."]}])
    composer.press("Enter")
    expect(page.locator(".msg-user", has_text=prompt)).to_be_visible()
    expect(page.locator(".msg-assistant", has_text="Here you are.")).to_be_visible()
