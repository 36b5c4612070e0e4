"""A person in Chromium reads maths in an answer: `$...$` inline and `$$...$$` on its own
lines are typeset by KaTeX as the answer streams and after a reload; prices stay text,
TeX that cannot be read shows its source, a TeX link to script is no link, and Copy gives
the Markdown the Oracle wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.testing.fake_server import FakeServer
from tests.browser.conftest import each_look, person, start_conversation
from tests.stack import OracleStack

pytestmark = pytest.mark.browser
FIRST = "The area of a circle is $\\pi r^2$, and $$E = mc^2$$ in a sentence."
REST = (
    "\n\nIt costs $5 and $10, or `$HOME$` in code.\n\n"
    "$$\n\\sum_{n=1}^{\\infty} \\frac{1}{n^2} = \\frac{\\pi^2}{6}\n$$\n\n"
    "Unreadable: $\\frac{1$. A link: $\\href{javascript:alert(1)}{click}$.\n\n"
    "Done."
)


def _clipboard(page: Any) -> str:
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_an_answer_shows_its_maths_typeset(
    page: Any, stack: OracleStack, fake_provider: FakeServer, tmp_path: Path
) -> None:
    name, _ = person(stack)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=stack.url)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    # The rest of the answer comes seconds after its first sentence.
    fake_provider.set_script([{"text": [FIRST, REST], "chunk_delay": 4}])
    start_conversation(page, stack, name, "Some maths, please")

    answer = page.locator(".msg-assistant").last
    expect(answer.locator(".math.inline .katex")).to_be_visible()  # while it streams
    expect(answer.locator(".math.display .katex-display")).to_be_visible()
    expect(answer).not_to_contain_text("Done.")

    expect(answer).to_contain_text("Done.", timeout=20_000)
    expect(page.locator("#gauges")).to_have_attribute("data-status", "finished")
    for shown in ("finished", "reloaded"):
        answer = page.locator(".msg-assistant").last
        expect(answer.locator(".math.block .katex-display")).to_be_visible()
        expect(answer.locator(".math.block .katex-mathml")).to_contain_text("π")
        assert answer.locator(".katex").count() == 4, shown  # the error is no formula
        expect(answer).to_contain_text("It costs $5 and $10, or $HOME$ in code.")
        expect(answer.locator(".katex-error")).to_have_text("\\frac{1")
        expect(page.locator("a[href^='javascript' i], [href*='alert']")).to_have_count(0)
        if shown == "finished":
            for folder, look in each_look(page, tmp_path):
                page.screenshot(path=str(folder / f"conversation-maths-{look}.png"))
        answer.get_by_role("button", name="Copy answer").click()
        expect(answer.get_by_role("button", name="Copy answer")).to_have_text("Copied")
        assert _clipboard(page) == FIRST + REST, shown
        page.reload()
    assert not dialogs
