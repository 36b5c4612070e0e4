"""A person uploads a document, asks about it in a Deep research conversation, and sees
the search, the helper it delegated to (its own gauges and steps), and the quoted answer."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.skill_trees import PLAN_HINT
from agents.testing.fake_server import FakeServer
from tests.browser.conftest import each_look, log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser

NOTES = """# Zebra notes

## Sleep

Zebras sleep standing up, in short naps, while one of the herd keeps watch.

## Food

They graze on tough grasses for most of the day.
"""
TASK = "Read the zebra notes and say how zebras sleep."


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_deep_research_searches_delegates_and_answers_with_a_quote(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    stack.client(stack.create_user("dora"))
    log_in(page, stack.url, "dora")
    notes = tmp_path / "zebras.md"
    notes.write_text(NOTES)
    page.goto(f"{stack.url}/documents/")
    page.set_input_files("#upload-file", str(notes))
    expect(page.locator(".upload", has_text="zebras.md")).to_contain_text("Added:")

    fake_provider.set_script(
        [
            {"text": ["Plan: 1. search the notes. 2. ask a researcher. "]}
            | _call("search_documents", query="zebras sleep"),
            _call("delegate", agent_type="researcher", task=TASK),
            _call("search_documents", query="how zebras sleep"),  # the researcher
            {"text": ["Zebras sleep standing up, in short naps."]},  # its answer
            {
                "text": [
                    "They sleep on their feet:\n\n",
                    "> Zebras sleep standing up, in short naps, while one of the herd keeps watch.",
                    "\n\n— *Zebra notes*, Sleep",
                ]
            },
        ]
    )
    earlier = len(fake_provider.requests)
    page.goto(f"{stack.url}/")
    page.click("label[for=skill-deep_research]")  # the pill a person clicks
    expect(page.get_by_role("radio", name="Deep research")).to_be_checked()
    page.fill("#composer-input", "How do zebras sleep?")
    page.press("#composer-input", "Enter")

    answer = page.locator(".msg-assistant blockquote")
    expect(answer).to_contain_text("Zebras sleep standing up, in short naps")
    expect(page.locator(".msg-assistant").last).to_contain_text("— Zebra notes, Sleep")
    expect(page.locator(".chat-header .skill-badge")).to_have_text("Skill: Deep research")

    search = page.locator(
        ".tool-step", has=page.locator("summary code", has_text="search_documents")
    )
    expect(search.first).to_contain_text("done")
    search.first.locator("summary").click()
    expect(search.first.locator(".tool-output")).to_contain_text("Zebras sleep standing up")

    step = page.locator(".delegate-step")
    expect(step.locator("summary")).to_contain_text("to a researcher")
    step.locator("summary").click()
    helper = step.locator(".subagent")
    expect(helper).to_have_attribute("data-status", "finished")
    expect(helper.locator(".subagent-task")).to_have_text(TASK)
    expect(helper.locator(".subagent-steps")).to_contain_text("search_documents")
    expect(helper).to_contain_text("Completed")
    expect(helper.locator(".gauge[data-metric=iterations] .gauge-figures")).to_have_text("2 / 30")
    helper_tokens = _figure(helper.locator(".gauge[data-metric=tokens] .gauge-figures"))
    run_tokens = _figure(page.locator("#gauges #gauge-tokens .gauge-figures"))
    assert 0 < helper_tokens < run_tokens  # the helper's tokens count in the run's
    expect(step.locator(".tool-output")).to_have_text("Zebras sleep standing up, in short naps.")

    asked = fake_provider.requests[earlier:]
    assert PLAN_HINT in [m.get("content") for m in asked[0]["messages"]]  # its own tree
    assert asked[2]["messages"][0]["content"].startswith("You are a researcher")
    for folder, look in each_look(page, tmp_path):
        page.locator(".delegate-step").scroll_into_view_if_needed()
        page.screenshot(path=str(folder / f"deep-research-{look}.png"))

    page.reload()  # the same after a reload, from the saved conversation
    step = page.locator(".delegate-step")
    step.locator("summary").click()
    expect(step.locator(".subagent")).to_contain_text("Completed")
    expect(step.locator(".subagent-steps")).to_contain_text("search_documents")


def _figure(locator: Any) -> int:
    return int(re.sub(r"[^\d]", "", locator.inner_text().split(" / ")[0]))
