"""A person in Chromium types while the Oracle works or waits: nothing they typed is
lost. Send is off and the composer says why, in words that fit what the run is doing;
Enter keeps the text; a reload keeps it; a message the server refuses stays in the box."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.testing.fake_server import FakeServer
from tests.browser.conftest import each_look
from tests.browser.conftest import person as _person
from tests.browser.conftest import start_conversation as _start
from tests.stack import OracleStack

pytestmark = pytest.mark.browser
STORY = [f"Chapter {i}. " for i in range(1, 80)]


def test_what_is_typed_while_the_oracle_answers_stays_until_it_can_be_sent(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name, _ = _person(stack)
    fake_provider.set_script([{"text": STORY, "chunk_delay": 0.1, "hang": True}])
    _start(page, stack, name, "Tell me a story")
    expect(page.locator(".msg-assistant", has_text="Chapter 2.")).to_be_visible()
    composer, send = page.locator("#composer-input"), page.locator("#composer .primary")
    state = page.locator("#composer-state")

    composer.fill("And then what?")
    composer.press("Enter")

    expect(composer).to_have_value("And then what?")
    expect(send).to_be_disabled()
    expect(state).to_have_text(re.compile("still working on the last message"))
    expect(page.locator(".msg-user")).to_have_count(1)
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"composer-working-{look}.png"))

    page.reload()  # what was typed is still there, and so is why it waits
    expect(composer).to_have_value("And then what?")
    expect(state).to_have_text(re.compile("still working"))
    expect(send).to_be_disabled()

    composer.press("Escape")  # Stop
    expect(page.locator(".msg-system", has_text="You stopped the run.")).to_be_visible()
    expect(state).to_be_hidden()
    expect(send).to_be_enabled()
    expect(composer).to_have_value("And then what?")
    fake_provider.set_script([{"text": ["The end."]}])
    composer.press("Enter")
    expect(page.locator(".msg-assistant", has_text="The end.")).to_be_visible()
    expect(composer).to_have_value("")
    page.reload()
    expect(composer).to_have_value("")  # sent: no draft comes back


def test_a_paused_run_says_it_waits_for_the_user_not_that_it_works(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name, _ = _person(stack, max_iterations=2, limit_action="pause")
    step = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]}
    fake_provider.set_script([step, step, {"text": ["Done."]}])
    _start(page, stack, name, "Add things up")
    expect(page.locator(".msg-system", has_text="Paused at")).to_be_visible()
    composer, state = page.locator("#composer-input"), page.locator("#composer-state")

    composer.fill("Never mind")
    composer.press("Enter")

    expect(state).to_have_text(re.compile("paused, waiting for you: continue or stop it"))
    expect(state).not_to_contain_text("still working")
    expect(composer).to_have_value("Never mind")
    expect(page.locator(".msg-user")).to_have_count(1)
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"composer-paused-{look}.png"))
    page.reload()
    expect(state).to_have_text(re.compile("paused, waiting for you"))

    page.locator(".msg-system .system-actions button", has_text="Stop").click()
    expect(state).to_be_hidden()
    expect(page.locator("#composer .primary")).to_be_enabled()


def test_a_message_the_server_refuses_stays_in_the_composer(
    page: Any, stack: OracleStack, fake_provider: FakeServer
) -> None:
    name, client = _person(stack)
    fake_provider.set_script([{"text": ["Hello."]}])
    _start(page, stack, name, "Hi")
    expect(page.locator(".msg-assistant", has_text="Hello.")).to_be_visible()
    conversation = page.url.rstrip("/").rsplit("/", 1)[-1]

    # this tab hears nothing more from its socket, so it cannot know what follows
    def deaf(socket: Any) -> None:
        server = socket.connect_to_server()
        server.on_message(lambda message: None)

    page.route_web_socket(re.compile("/ws/"), deaf)
    page.reload()
    expect(page.locator(".msg-assistant", has_text="Hello.")).to_be_visible()
    fake_provider.set_script([{"text": STORY, "chunk_delay": 0.1, "hang": True}])
    posted = client.post(f"/api/conversations/{conversation}/messages/", json={"content": "Go"})
    assert posted.status_code == 202

    page.fill("#composer-input", "Me too")
    page.press("#composer-input", "Enter")

    expect(page.locator("#composer-error")).to_contain_text("still working")
    expect(page.locator("#composer-input")).to_have_value("Me too")
    client.post(f"/api/runs/{posted.json()['run_id']}/cancel/")


def test_a_paste_longer_than_the_limit_says_so_and_is_not_cut(
    page: Any, stack: OracleStack, fake_provider: FakeServer
) -> None:
    name, _ = _person(stack)
    fake_provider.set_script([{"text": ["Hello."]}])
    _start(page, stack, name, "Hi")
    expect(page.locator(".msg-assistant", has_text="Hello.")).to_be_visible()
    composer, send = page.locator("#composer-input"), page.locator("#composer .primary")
    pasted = "word " * 6_500  # 32,500 characters, past the 32,000 allowed

    composer.focus()
    page.keyboard.insert_text(pasted)

    expect(composer).to_have_value(pasted)  # all of it kept, nothing silently cut
    expect(page.locator("#composer-state")).to_have_text(
        "At most 32,000 characters (this one has 32,500)."
    )
    expect(send).to_be_disabled()
    composer.press("Enter")
    expect(page.locator(".msg-user")).to_have_count(1)

    page.keyboard.press("Control+End")
    for _ in range(500):
        page.keyboard.press("Backspace")  # down to 32,000
    expect(page.locator("#composer-state")).to_be_hidden()
    expect(send).to_be_enabled()
