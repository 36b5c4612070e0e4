"""A person uploads a document, asks the offline model about it, and clicks the source
under the quote: the document opens in a new tab at that sentence, highlighted and in
view. Screenshots of the answer and of the page, light and dark, desktop and phone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import each_look, log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser

SENTENCE = "Zebras sleep standing up, in short naps, while one of the herd keeps watch."
FILLER = (
    "The savanna stretches for miles under a wide sky. Acacias dot the grass, and the "
    "rivers run low in the dry months. "
)
# Long enough before the sentence that it lies below the first screen.
NOTES = (
    "# Zebra notes\n\n## Stripes\n\n"
    + "\n\n".join([FILLER * 3] * 8)
    + f"\n\n## Rest\n\n{SENTENCE} They lie down only when the herd is near.\n\n"
    + "## Food\n\nThey graze on tough grasses for most of the day.\n"
)


def test_a_citation_opens_the_quoted_passage_highlighted(
    page: Any, offline: OracleStack, tmp_path: Path
) -> None:
    offline.create_user("cora")
    log_in(page, offline.url, "cora")
    notes = tmp_path / "zebras.md"
    notes.write_text(NOTES)
    page.goto(f"{offline.url}/documents/")
    page.set_input_files("#upload-file", str(notes))
    expect(page.locator(".upload", has_text="zebras.md")).to_contain_text("Added:")

    page.goto(f"{offline.url}/")
    page.fill("#composer-input", "How do zebras sleep?")
    page.press("#composer-input", "Enter")
    answer = page.locator(".msg-assistant").last
    expect(answer.locator("blockquote").first).to_have_text(SENTENCE, timeout=30_000)
    citation = answer.get_by_role("link", name="Zebra notes, Rest").first
    expect(citation).to_have_attribute("target", "_blank")  # a run stays on screen
    for folder, look in each_look(page, tmp_path):
        answer.scroll_into_view_if_needed()
        page.screenshot(path=str(folder / f"citation-answer-{look}.png"))

    with page.context.expect_page() as opened:
        citation.click()
    document = opened.value
    document.wait_for_load_state()
    expect(document).to_have_title("Zebra notes · Documents · Oracle")
    cited = document.locator("mark.cited")
    expect(cited).to_have_text([SENTENCE])
    expect(document.locator("#passage")).to_be_in_viewport()
    # Below the first screen: the page did scroll to it.
    assert document.locator("#main").evaluate("main => main.scrollTop") > 0
    for folder, look in each_look(document, tmp_path):
        document.locator("#passage").scroll_into_view_if_needed()
        document.screenshot(path=str(folder / f"citation-document-{look}.png"))
