"""A person writes custom instructions on the settings page, then asks the Oracle: the
model gets them, and the answer's foot says the run used them (opened, it shows them).
Screenshots of both pages, light and dark, desktop and phone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.testing.fake_server import FakeServer
from tests.browser.conftest import each_look, log_in, person
from tests.stack import OracleStack

pytestmark = pytest.mark.browser

# After a scroll, the page is painted before its screenshot is taken.
PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
INSTRUCTIONS = "Answer in French.\nI am a vet: skip the basics and give doses in mg/kg."


def test_instructions_set_on_the_settings_page_are_used_and_the_chat_says_so(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name, _ = person(stack)
    log_in(page, stack.url, name)
    page.goto(f"{stack.url}/settings/")
    page.get_by_role("link", name="Custom instructions").click()
    box = page.get_by_label("Custom instructions")
    box.fill(INSTRUCTIONS)
    expect(page.locator("#status-custom_instructions")).to_contain_text("Saved")
    expect(page.locator("#count-custom_instructions")).to_have_text("70 / 4,000 characters")
    for folder, look in each_look(page, tmp_path):
        page.locator("#setting-custom_instructions").scroll_into_view_if_needed()
        page.evaluate(PAINTED)
        page.screenshot(path=str(folder / f"instructions-settings-{look}.png"))

    fake_provider.set_script([{"text": ["Bonjour, docteur."]}], repeat_last=True)
    page.goto(f"{stack.url}/")
    page.click("text=New conversation")
    page.fill("#composer-input", "Hello")
    page.press("#composer-input", "Enter")

    used = page.locator(".msg-assistant .instructions-used")
    expect(used.locator("summary")).to_have_text("With your instructions", timeout=20_000)
    expect(used.locator(".instructions-text")).to_be_hidden()
    for folder, look in each_look(page, tmp_path):
        page.locator(".msg-assistant").last.scroll_into_view_if_needed()
        page.evaluate(PAINTED)
        page.screenshot(path=str(folder / f"instructions-answer-{look}.png"))
    used.locator("summary").focus()
    page.keyboard.press("Enter")  # reached and opened from the keyboard
    expect(used.locator(".instructions-text")).to_have_text(INSTRUCTIONS)
    system = fake_provider.requests[-1]["messages"][0]["content"]
    assert INSTRUCTIONS in system
    for folder, look in each_look(page, tmp_path):
        page.locator(".msg-assistant").last.scroll_into_view_if_needed()
        page.evaluate(PAINTED)
        page.screenshot(path=str(folder / f"instructions-answer-open-{look}.png"))

    page.reload()  # the saved answer says so too
    expect(page.locator(".msg-assistant .instructions-used summary")).to_have_text(
        "With your instructions"
    )


def test_instructions_too_long_are_refused_on_the_page_and_the_stored_ones_stay(
    page: Any, stack: OracleStack
) -> None:
    name, client = person(stack, custom_instructions="Be brief.")
    log_in(page, stack.url, name)
    page.goto(f"{stack.url}/settings/")
    box = page.locator("#id_custom_instructions")
    expect(box).to_have_value("Be brief.")

    box.fill("x" * 4001)

    status = page.locator("#status-custom_instructions")
    expect(status).to_contain_text("Must be at most 4,000 characters (this is 4,001).")
    expect(page.locator("#count-custom_instructions")).to_have_class("help char-count js-only over")
    expect(box).to_have_attribute("aria-invalid", "true")
    assert client.get("/api/settings/").json()["custom_instructions"] == "Be brief."
    page.reload()
    expect(box).to_have_value("Be brief.")
