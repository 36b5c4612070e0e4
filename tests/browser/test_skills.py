"""A person in Chromium picks a skill on the first page; the conversation shows it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.testing.fake_server import FakeServer
from tests.browser.conftest import each_look, log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser

QUICK_HINT = "Answer directly and briefly; use a tool only if you must."


def test_a_quick_answer_chosen_on_the_first_page_is_shown_on_the_conversation(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    client = stack.client(stack.create_user("skill-quinn"))
    fake_provider.set_script([{"text": ["Four."]}])
    log_in(page, stack.url, "skill-quinn")
    page.goto(f"{stack.url}/")

    skills = page.get_by_role("group", name="Skill")
    default = skills.get_by_role("radio", name="Default")
    quick = skills.get_by_role("radio", name="Quick answer")
    expect(default).to_be_checked()
    expect(page.get_by_text("Works with its tools within your own limits.")).to_be_visible()
    default.focus()  # the keyboard moves through the choices as through any radio group
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(quick).to_be_checked()
    expect(quick).to_have_accessible_description(
        "A short, direct answer: at most 3 iterations and 5 tool calls, no delegation."
    )
    expect(page.get_by_text("A short, direct answer")).to_be_visible()
    expect(page.get_by_text("Works with its tools within your own limits.")).to_be_hidden()
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"skill-picker-{look}.png"), full_page=True)

    page.fill("#composer-input", "What is 2+2?")
    page.press("#composer-input", "Enter")

    page.wait_for_selector(".msg-assistant >> text=Four.")
    badge = page.locator(".chat-header .skill-badge")
    expect(badge).to_have_text("Skill: Quick answer")
    conversation_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    assert client.get(f"/api/conversations/{conversation_id}/").json()["skill"] == "quick_answer"
    # The worker ran the quick-answer tree: the model was told to answer directly.
    sent = [m.get("content") for m in fake_provider.requests[-1]["messages"]]
    assert QUICK_HINT in sent
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"skill-badge-{look}.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: in sight, no sideways page
    box = badge.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") == 390

    page.reload()
    expect(page.locator(".chat-header .skill-badge")).to_have_text("Skill: Quick answer")
