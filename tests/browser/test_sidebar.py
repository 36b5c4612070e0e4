"""A person in Chromium using the sidebar: conversations by date, search as you type,
rename in place, delete with Undo, and exports that download."""

from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests import processes
from tests.browser.conftest import log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser
_people = itertools.count(1)

# Conversations of one person, made straight in the stack's database (one `manage.py
# shell`): their dates are set, which no click could do.
SEED = """
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from chat.models import Conversation, Message, Run

owner = User.objects.create_user({name!r}, password="correct horse battery")
chats = [
    ("Trip to Lisbon", 0, ["Plan three days in Lisbon", "Day one: Alfama and the castle."]),
    ("Sourdough starter", 3, ["How do I feed a sourdough starter?", "Twice a day."]),
    ("Tax questions", 45, ["When is the tax deadline?", "In April."]),
]
for title, days, lines in chats:
    conversation = Conversation.objects.create(owner=owner, title=title,
                                               last_message_seq=len(lines))
    run = Run.objects.create(conversation=conversation, status="finished", reason="completed",
                             iterations=1, tokens=42)
    for seq, text in enumerate(lines, start=1):
        Message.objects.create(conversation=conversation, run=run, seq=seq, content=text,
                               role="user" if seq == 1 else "assistant")
    Conversation.objects.filter(pk=conversation.pk).update(
        updated_at=timezone.now() - timedelta(days=days))
Conversation.objects.create(owner=owner, title="Never said anything")
"""


def _reader(stack: OracleStack) -> str:
    name = f"sidebar-reader-{next(_people)}"
    done = processes.shell(SEED.format(name=name), env=stack.env)
    assert done.returncode == 0, done.stderr
    return name


def _item(page: Any, title: str) -> Any:
    return page.locator("#sidebar-list li", has=page.locator(f"a:text-is('{title}')"))


def _menu(page: Any, title: str) -> Any:
    page.wait_for_load_state()  # sidebar.js (deferred) is listening
    item = _item(page, title)
    item.hover()
    item.locator(".item-menu-button").click()
    return item


def test_conversations_are_grouped_by_date(
    page: Any, browser: Any, stack: OracleStack, tmp_path: Path
) -> None:
    log_in(page, stack.url, _reader(stack))

    sidebar = page.locator("#sidebar-list")
    expect(sidebar.locator("h3")).to_have_count(3)
    labels = sidebar.locator("h3").all_inner_texts()
    assert labels[:2] == ["Today", "Previous 7 days"]
    assert re.fullmatch(r"[A-Z][a-z]+ 20\d\d", labels[2])  # a month: "October 2026"
    expect(sidebar.locator("section").nth(0)).to_contain_text("Trip to Lisbon")
    expect(sidebar.locator("section").nth(1)).to_contain_text("Sourdough starter")
    expect(sidebar.locator("section").nth(2)).to_contain_text("Tax questions")
    expect(sidebar).not_to_contain_text("Never said anything")

    shots = Path(os.environ.get("ORACLE_VAR_DIR", tmp_path)) / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    _item(page, "Sourdough starter").hover()
    page.screenshot(path=str(shots / "sidebar-desktop.png"))

    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    phone = context.new_page()
    phone.context.add_cookies(page.context.cookies())
    phone.goto(stack.url)
    expect(phone.locator("#sidebar")).not_to_be_in_viewport()
    phone.click(".sidebar-toggle")
    expect(phone.locator("#sidebar-list h3").first).to_be_in_viewport()
    # No hover on a phone: the menu buttons show all the time.
    expect(phone.locator("#sidebar-list .item-menu-button").first).to_have_css("opacity", "1")
    phone.wait_for_timeout(300)  # the sidebar slides in
    phone.screenshot(path=str(shots / "sidebar-phone.png"))
    context.close()


def test_typing_in_search_filters_the_list(page: Any, stack: OracleStack) -> None:
    log_in(page, stack.url, _reader(stack))

    page.fill("#sidebar-search-input", "SOURDOUGH")
    expect(page.locator("#sidebar-list li")).to_have_count(1)
    expect(page.locator("#sidebar-list li")).to_contain_text("Sourdough starter")

    page.fill("#sidebar-search-input", "alfama")  # in an answer, not in a title
    expect(page.locator("#sidebar-list li")).to_have_count(1)
    expect(page.locator("#sidebar-list li mark")).to_have_text("Alfama")
    expect(page.locator("#sidebar-list li")).to_contain_text("Trip to Lisbon")

    page.fill("#sidebar-search-input", "porto")
    expect(page.locator("#sidebar-list")).to_have_text("No conversations match “porto”.")

    page.fill("#sidebar-search-input", "")
    expect(page.locator("#sidebar-list li")).to_have_count(3)


def test_a_conversation_is_renamed_in_place(page: Any, stack: OracleStack) -> None:
    log_in(page, stack.url, _reader(stack))
    page.click("#sidebar-list a:text-is('Trip to Lisbon')")
    page.wait_for_selector(".msg-user")

    expect(page.locator("#sidebar-list li.current")).to_have_text("Trip to Lisbon")
    _menu(page, "Trip to Lisbon")
    rename = page.get_by_role("menuitem", name="Rename “Trip to Lisbon”")
    expect(rename).to_be_focused()  # the menu opens at its first item
    page.keyboard.press("ArrowUp")
    expect(page.get_by_role("menuitem", name="Delete “Trip to Lisbon”")).to_be_focused()
    page.keyboard.press("Escape")  # closes the menu, back on its button
    expect(page.locator("#sidebar-list li.current .item-menu-button")).to_be_focused()
    page.keyboard.press("Enter")
    rename.click()
    title = page.locator("#sidebar-list li input[name=title]")
    expect(title).to_be_focused()
    title.fill("Weekend in Sintra")
    title.press("Escape")  # cancels, and does not stop anything else
    expect(page.locator("#sidebar-list li.current a").first).to_have_text("Trip to Lisbon")

    _menu(page, "Trip to Lisbon")
    page.get_by_role("menuitem", name="Rename “Trip to Lisbon”").click()
    title.fill("Weekend in Sintra")
    title.press("Enter")

    item = page.locator("#sidebar-list li.current")
    expect(item).to_have_attribute("aria-current", "page")
    expect(item.locator("a").first).to_have_text("Weekend in Sintra")
    expect(page.locator("#title")).to_have_value("Weekend in Sintra")  # the header too
    page.reload()
    expect(page.locator("#sidebar-list li.current a").first).to_have_text("Weekend in Sintra")


def test_delete_then_undo_brings_it_back(page: Any, stack: OracleStack) -> None:
    log_in(page, stack.url, _reader(stack))

    _menu(page, "Sourdough starter")
    page.get_by_role("menuitem", name="Delete “Sourdough starter”").click()
    expect(_item(page, "Sourdough starter")).to_have_count(0)
    toast = page.locator("#undo-toast")
    expect(toast).to_contain_text("Deleted “Sourdough starter”.")
    expect(toast).to_be_in_viewport()

    toast.get_by_role("button", name="Undo").click()
    expect(_item(page, "Sourdough starter")).to_have_count(1)
    expect(toast).to_be_hidden()
    page.click("#sidebar-list a:text-is('Sourdough starter')")
    expect(page.locator(".msg-assistant")).to_contain_text("Twice a day.")


def test_deleting_the_open_conversation_goes_home_and_offers_undo(
    page: Any, stack: OracleStack
) -> None:
    log_in(page, stack.url, _reader(stack))
    page.click("#sidebar-list a:text-is('Tax questions')")
    page.wait_for_selector(".msg-user")

    _menu(page, "Tax questions")
    page.get_by_role("menuitem", name="Delete “Tax questions”").click()
    page.wait_for_url(f"{stack.url}/")
    expect(_item(page, "Tax questions")).to_have_count(0)

    page.locator("#undo-toast").get_by_role("button", name="Undo").click()
    expect(_item(page, "Tax questions")).to_have_count(1)
    page.wait_for_url("**/c/**")  # Undo reopens it
    expect(page.locator(".msg-user").first).to_be_visible()


def test_the_headers_delete_is_the_sidebars_at_once_with_an_undo_that_reopens(
    page: Any, stack: OracleStack
) -> None:
    log_in(page, stack.url, _reader(stack))
    page.click("#sidebar-list a:text-is('Sourdough starter')")
    page.wait_for_selector(".msg-user")
    opened = page.url
    page.on("dialog", lambda dialog: dialog.dismiss())  # a question would stop the delete

    page.locator(".chat-header").get_by_role("button", name="Delete").click()

    page.wait_for_url(f"{stack.url}/")
    expect(_item(page, "Sourdough starter")).to_have_count(0)
    page.locator("#undo-toast").get_by_role("button", name="Undo").click()
    page.wait_for_url(opened)
    expect(page.locator(".msg-assistant")).to_contain_text("Twice a day.")
    expect(_item(page, "Sourdough starter")).to_have_count(1)


def test_the_export_links_download_the_conversation(page: Any, stack: OracleStack) -> None:
    log_in(page, stack.url, _reader(stack))

    _menu(page, "Trip to Lisbon")
    with page.expect_download() as markdown:
        page.get_by_role("menuitem", name="Export “Trip to Lisbon” as Markdown").click()
    _menu(page, "Trip to Lisbon")
    with page.expect_download() as as_json:
        page.get_by_role("menuitem", name="Export “Trip to Lisbon” as JSON").click()

    assert markdown.value.suggested_filename == "trip-to-lisbon.md"
    text = Path(markdown.value.path()).read_text()
    assert text.startswith("# Trip to Lisbon\n")
    assert "Day one: Alfama and the castle." in text
    assert as_json.value.suggested_filename == "trip-to-lisbon.json"
    body = json.loads(Path(as_json.value.path()).read_text())
    assert [m["content"] for m in body["messages"]] == [
        "Plan three days in Lisbon",
        "Day one: Alfama and the castle.",
    ]
    assert [run["reason"] for run in body["runs"]] == ["completed"]
