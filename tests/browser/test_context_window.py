"""A person in Chromium sends two long messages to a model with a 3,000-token window: the
second is summarised to fit (the provider refused it first, as OpenAI does). The Context
gauge shows the call's prompt against the window, and the System message of the summary
opens, like a tool step, on the summary the model was sent; live and after a reload.
Screenshots light and dark, on a desktop and a phone."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.browser.conftest import each_look, log_in, person
from tests.stack import OracleStack

pytestmark = pytest.mark.browser
MODEL = "openai/fake-window"  # the stack's model with no window LiteLLM knows
WORDS = "owl river stone lantern maple quiet harbor ember violet canyon".split()  # noqa: SIM905
SUMMARY = (
    "**Earlier in this conversation** the user sent a long note of nature words:\n\n"
    "- *owl*, *river* and *stone* come up most;\n"
    "- the Oracle answered “Noted.”"
)
FORGET_WINDOW = (
    "from settings_ui.models import ModelWindow; "
    f"ModelWindow.objects.filter(model={MODEL!r}).delete()"
)


FIGURES = re.compile(r"context: [0-9,]+ of 3,000 tokens")
GAUGE_FIGURES = re.compile(r"[0-9,]+ / 3,000")


def long_message(number: int) -> str:
    """About 1,000 tokens that say which message they are."""
    chosen = random.Random(number)
    return f"Note {number}: " + " ".join(chosen.choice(WORDS) for _ in range(900))


@pytest.fixture
def small_window(stack: OracleStack, fake_provider: FakeServer) -> Iterator[FakeServer]:
    """The fake provider refusing requests over 3,000 tokens; the stack has learnt no
    window of MODEL before the test, nor keeps the one it learns (other tests count the
    refusal that teaches it)."""
    forgotten = processes.shell(FORGET_WINDOW, env=stack.env)
    assert forgotten.returncode == 0, forgotten.stderr
    fake_provider.window = 3_000
    try:
        yield fake_provider
    finally:
        fake_provider.window = None
        processes.shell(FORGET_WINDOW, env=stack.env)


def send(page: Any, text: str) -> None:
    page.fill("#composer-input", text)
    page.press("#composer-input", "Enter")


def test_a_conversation_summarised_to_fit_the_window_shows_its_summary_and_context(
    page: Any, stack: OracleStack, small_window: FakeServer, tmp_path: Path
) -> None:
    name, _ = person(stack, model=MODEL, token_warning_percent=50)
    # The first answer, the summary (the compaction call), the second answer.
    small_window.set_script([{"text": ["Noted."]}, {"text": [SUMMARY]}, {"text": ["Noted again."]}])
    log_in(page, stack.url, name)
    page.click("text=New conversation")
    send(page, long_message(1))
    expect(page.locator(".msg-assistant", has_text="Noted.")).to_be_visible(timeout=30_000)
    expect(page.locator("#gauges .gauge[data-metric=tokens]")).to_be_visible()
    expect(page.locator("#gauge-context")).to_have_count(0)  # no window known yet

    refused = len(small_window.refused)  # the session's provider, other tests' refusals too
    send(page, long_message(2))
    expect(page.locator(".msg-assistant", has_text="Noted again.")).to_be_visible(timeout=30_000)
    assert len(small_window.refused) - refused == 1

    notice = page.locator(".msg-system", has_text="Earlier messages were summarised")
    summary = notice.locator("details.context-summary")
    gauge = page.locator("#gauge-context")
    for moment in ("live", "after a reload"):
        expect(notice).to_have_count(1)
        expect(notice.locator(".figures")).to_have_text(FIGURES)
        expect(notice).to_contain_text("to fit the model's 3,000-token context")
        expect(summary.locator("summary")).to_have_text("Summary sent to the model")
        expect(summary.locator(".context-summary-text")).to_be_hidden()  # closed, as a step
        summary.locator("summary").click()
        expect(summary.locator("strong")).to_have_text("Earlier in this conversation")
        expect(summary.locator("li")).to_have_count(2)
        expect(gauge.locator(".gauge-label")).to_have_text("Context")
        expect(gauge.locator(".gauge-figures")).to_have_text(GAUGE_FIGURES)
        # The warning colour from the user's token warning percent; the meter as the figures.
        meter = gauge.locator("meter")
        expect(meter).to_have_attribute("low", "50")
        prompt = int(gauge.locator(".gauge-figures").inner_text().split(" / ")[0].replace(",", ""))
        assert meter.evaluate("m => m.value") == round(100 * prompt / 3000), moment
        if moment == "live":
            for folder, look in each_look(page, tmp_path):
                page.locator(".main").evaluate("el => el.scrollTo(0, el.scrollHeight)")
                page.wait_for_timeout(100)
                page.screenshot(path=str(folder / f"conversation-context-summary-{look}.png"))
            page.reload()
            page.wait_for_selector("#gauge-context")
