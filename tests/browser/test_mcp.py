"""A person in Chromium with MCP tools: approving, always allowing and denying a call in
the chat (also after a reload), a slow tool's progress on its step, a tool's picture,
and the Tools page where they switch a server off for their runs."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.browser.conftest import each_look, log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser
_people = itertools.count(1)
APPROVE = ".msg-system .approval button >> text=Approve"


def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture(scope="module")
def ready(mcp_stack: OracleStack) -> OracleStack:
    """The stack once its worker has the testing server up."""
    with mcp_stack.client(mcp_stack.create_user("mcp-watcher")) as client:
        processes.wait_for(
            lambda: client.get("/healthz").json().get("mcp_servers", {}).get("testing") == "ready",
            30,
        )
    return mcp_stack


def person(stack: OracleStack) -> str:
    name = f"mcp-person-{next(_people)}"
    stack.create_user(name)
    return name


def ask(page: Any, message: str) -> None:
    page.fill("#composer-input", message)
    page.press("#composer-input", "Enter")
    page.wait_for_selector(f".msg-user >> text={message}")


def start(page: Any, stack: OracleStack, message: str) -> None:
    log_in(page, stack.url, person(stack))
    page.click("text=New conversation")
    ask(page, message)


def shoot(page: Any, tmp_path: Path, name: str) -> None:
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"{name}-{look}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


def test_approve_in_the_chat_runs_the_call_even_after_a_reload(
    page: Any, ready: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    fake_provider.set_script([call("testing__echo", {"text": "ship it"}), {"text": ["Shipped."]}])
    start(page, ready, "Ship it")

    page.wait_for_selector(APPROVE)
    step = page.locator(".tool-step", has_text="testing__echo")
    expect(step.locator(".tool-status")).to_have_text("waits for your approval")
    expect(page.locator(".msg-system", has_text="needs your approval")).to_contain_text(
        '"text": "ship it"'
    )
    expect(page.locator("#run-controls button.stop")).to_have_count(0)  # it holds no worker
    shoot(page, tmp_path, "mcp-approval")

    page.reload()  # the buttons are back: the page is rebuilt from the run's events
    page.wait_for_selector(APPROVE)
    page.wait_for_timeout(1200)  # the socket has opened and said what the page has
    page.click(APPROVE)

    page.wait_for_selector(".msg-assistant >> text=Shipped.")
    expect(step.locator(".tool-status")).to_have_text("done")
    step.locator("summary").click()
    expect(step.locator(".tool-output")).to_have_text("ship it")
    expect(page.locator(".approval")).to_have_count(0)


def test_deny_tells_the_oracle_and_always_allow_stops_the_asking(
    page: Any, ready: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    fake_provider.set_script(
        [call("testing__echo", {"text": "delete all"}), {"text": ["As you wish."]}]
    )
    start(page, ready, "Delete it all")
    page.wait_for_selector(APPROVE)
    page.click(".msg-system .approval button >> text=Deny")
    page.wait_for_selector(".msg-assistant >> text=As you wish.")
    denied = page.locator(".tool-step", has_text="testing__echo")
    expect(denied.locator(".tool-status")).to_have_text("declined")  # no error of the tool
    denied.locator("summary").click()
    expect(denied.locator(".tool-output")).to_contain_text("The user declined this call.")
    assert "declined" in str(fake_provider.requests[-1]["messages"][-1]["content"])

    fake_provider.set_script([call("testing__echo", {"text": "one"}), {"text": ["Said one."]}])
    ask(page, "Say one")
    page.wait_for_selector(APPROVE)
    page.click(".msg-system .approval button >> text=Always allow here")
    page.wait_for_selector(".msg-assistant >> text=Said one.")

    fake_provider.set_script([call("testing__echo", {"text": "two"}), {"text": ["Said two."]}])
    ask(page, "Say two")
    page.wait_for_selector(".msg-assistant >> text=Said two.")  # no asking this time
    expect(page.locator(".approval")).to_have_count(0)
    expect(page.locator(".tool-step", has_text="testing__echo")).to_have_count(3)

    # The grant is on the Tools page; revoked there, the tool asks again.
    conversation = page.url
    page.goto(f"{ready.url}/tools/")
    grant = page.locator("#grants li", has_text="echo")
    expect(grant).to_contain_text("Delete it all")  # the conversation it was given in
    for folder, look in each_look(page, tmp_path):
        page.locator("#grants-title").scroll_into_view_if_needed()
        page.screenshot(path=str(folder / f"tools-grants-{look}.png"))
    grant.locator("button", has_text="Revoke").click()
    expect(page.locator("#grants")).to_contain_text("You have not let any tool act")
    page.goto(conversation)
    fake_provider.set_script([call("testing__echo", {"text": "three"}), {"text": ["Said three."]}])
    ask(page, "Say three")
    page.wait_for_selector(APPROVE)


def test_a_slow_tool_shows_its_progress_and_a_picture_shows_in_its_step(
    page: Any, ready: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    fake_provider.set_script(
        [
            call("testing__sleep", {"seconds": 4}),
            call("testing__picture", {}),
            {"text": ["Here is the picture."]},
        ]
    )
    start(page, ready, "Draw me something slowly")

    progress = page.locator(".tool-step", has_text="testing__sleep").locator(".tool-progress")
    expect(progress).to_contain_text(" of 4: slept ", timeout=10_000)
    for folder, look in itertools.islice(each_look(page, tmp_path), 1):  # it moves on soon
        page.screenshot(path=str(folder / f"mcp-progress-{look}.png"))
    page.wait_for_selector(".msg-assistant >> text=Here is the picture.")
    expect(progress).to_have_count(0)  # done: the step shows its result instead

    step = page.locator(".tool-step", has_text="testing__picture")
    step.locator("summary").click()
    picture = step.locator("img.tool-picture")
    expect(picture).to_be_visible()
    # Shown, then decoded: a lazy picture loads once its step opens, a moment later.
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 96", arg=picture.element_handle()
    )
    shoot(page, tmp_path, "mcp-picture")

    # Reloaded once the run is over (before, the page would replay the run's events and
    # redraw the step, closed, under the click): the saved step shows the picture too.
    expect(page.locator("#gauges")).to_have_attribute("data-status", "finished")
    page.reload()
    step = page.locator(".tool-step", has_text="testing__picture")
    step.locator("summary").click()
    expect(step.locator("img.tool-picture")).to_be_visible()


def test_stop_cuts_a_long_call_and_the_next_question_uses_the_same_server(
    page: Any, ready: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([call("testing__sleep", {"seconds": 60}), {"text": ["Slept."]}])
    start(page, ready, "Sleep for a minute")
    step = page.locator(".tool-step", has_text="testing__sleep")
    expect(step.locator(".tool-progress")).to_contain_text(" of 60: slept ", timeout=10_000)

    page.click("#run-controls button.stop")

    expect(page.locator(".msg-system", has_text="Stopped")).to_be_visible(timeout=5_000)
    expect(step.locator(".tool-status")).to_have_text("stopped")  # not a red "error"
    expect(page.locator("#run-controls button.stop")).to_have_count(0)

    fake_provider.set_script(
        [call("everything__echo", {"message": "still here"}), {"text": ["Echoed."]}]
    )
    ask(page, "Echo over HTTP")  # a real server from npm, over Streamable HTTP
    page.wait_for_selector(".msg-assistant >> text=Echoed.")
    echoed = page.locator(".tool-step", has_text="everything__echo")
    echoed.locator("summary").click()
    expect(echoed.locator(".tool-output")).to_have_text("Echo: still here")


def test_the_tools_page_lists_the_servers_and_switches_one_off_for_my_runs(
    page: Any, ready: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    log_in(page, ready.url, person(ready))
    page.click("#account-button")
    page.click("#account-menu >> text=Tools")
    page.wait_for_url(f"{ready.url}/tools/")

    testing = page.locator("#server-testing")
    expect(testing.locator(".badge").first).to_have_text("ready")
    expect(testing).to_contain_text("testing__echo")
    expect(testing.locator("li", has_text="testing__echo")).to_contain_text("asks first")
    expect(page.locator("#server-broken")).to_contain_text("failed")
    expect(page.locator("#server-broken .mcp-server-error")).not_to_be_empty()
    expect(page.locator(".tools-section", has_text="Built in")).to_contain_text("calculator")
    shoot(page, tmp_path, "tools-page")

    testing.locator("button", has_text="switch off").click()
    expect(page.locator("#server-testing button")).to_have_text("Not used: switch on")
    page.reload()
    expect(page.locator("#server-testing button")).to_have_text("Not used: switch on")

    fake_provider.set_script([{"text": ["No tools of that server."]}])
    page.goto(ready.url)
    page.click("text=New conversation")
    ask(page, "What can you use?")
    page.wait_for_selector(".msg-assistant >> text=No tools of that server.")
    offered = {tool["function"]["name"] for tool in fake_provider.requests[-1].get("tools", [])}
    assert "time__get_current_time" in offered
    # (`testing___…` are the tools of the server `testing_`, still used.)
    assert not any(re.match(r"testing__[^_]", name) for name in offered)
