"""A person attaches files from the composer, with the keyboard: a file Oracle cannot
read is refused beside the composer (the question typed stays), a Markdown file becomes
a chip, and the offline model answers from it with a quote and its source; the message
shows its attachment, a link to the document. An image becomes a chip with its
thumbnail; the offline model says it cannot see it, linking its document, whose page
shows it. Screenshots light and dark, desktop and phone, of the composer with its chip,
of the answers and of the image's page."""

# ruff: noqa: RUF001 (an image's size is written with the multiplication sign, as people read it)
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw
from playwright.sync_api import expect

from tests.browser.conftest import TWO_FRAMES, each_look, log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser

SENTENCE = "Zebras sleep standing up, in short naps, while one of the herd keeps watch."
NOTES = f"# Zebra notes\n\n## Food\n\nThey graze on tough grasses.\n\n## Rest\n\n{SENTENCE}\n"
LIONS = "Lions hunt at night, in groups the keepers call prides."


# Notes when the (hidden) file input is clicked: the browser was asked to open the file
# chooser. (Playwright's own chooser event misses some of several opened in a row
# from one input in Chromium; the file is then given to the input as the chooser would.)
WATCH_CHOOSER = """() => { window.chooserAsked = false; document.getElementById("attach-file")
  .addEventListener("click", () => { window.chooserAsked = true; }, { once: true }); }"""


def choose_with_the_keyboard(page: Any, path: Path) -> None:
    """Attach, reached from the message with Tab and pressed with Enter, then the file
    in the chooser."""
    page.focus("#composer-input")
    page.keyboard.press("Tab")
    expect(page.locator("#attach-button")).to_be_focused()
    page.evaluate(WATCH_CHOOSER)
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.chooserAsked")
    page.set_input_files("#attach-file", str(path))


def test_an_attached_file_is_sent_with_the_question_and_the_answer_cites_it(
    page: Any, offline: OracleStack, tmp_path: Path
) -> None:
    offline.create_user("ada")
    log_in(page, offline.url, "ada")
    notes, photo, extra = tmp_path / "zebras.md", tmp_path / "photo.png", tmp_path / "extra.txt"
    notes.write_text(NOTES)
    photo.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    extra.write_text("A note I do not need after all.")
    page.goto(f"{offline.url}/")
    page.fill("#composer-input", "How do zebras sleep?")

    choose_with_the_keyboard(page, photo)
    expect(page.locator("#attach-error")).to_have_text(
        "photo.png is not a PNG image: Oracle could not read it as one (a damaged file, or "
        "another kind of file renamed)."
    )
    expect(page.locator("#composer-input")).to_have_value("How do zebras sleep?")
    expect(page.locator(".attachment-chip")).to_have_count(0)
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"attach-refused-{look}.png"))

    choose_with_the_keyboard(page, notes)
    chip = page.locator(".attachment-chip", has_text="Zebra notes")
    expect(chip).to_be_visible()
    expect(page.locator("#attach-error")).to_have_text("")
    choose_with_the_keyboard(page, extra)
    unwanted = page.locator(".attachment-chip", has_text="extra")
    unwanted.get_by_role("button", name="Remove extra").focus()
    page.keyboard.press("Enter")
    expect(unwanted).to_have_count(0)
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"attach-composer-{look}.png"))

    page.focus("#composer-input")
    page.keyboard.press("Enter")

    attached = page.locator(".msg-user").first.get_by_role("link", name="Zebra notes")
    expect(attached).to_have_attribute("href", re.compile(r"^/documents/\d+/$"))
    answer = page.locator(".msg-assistant").last
    expect(answer.locator("blockquote").first).to_have_text(SENTENCE, timeout=30_000)
    expect(answer.get_by_role("link", name="Zebra notes, Rest").first).to_be_visible()
    for folder, look in each_look(page, tmp_path):
        answer.scroll_into_view_if_needed()
        page.evaluate(TWO_FRAMES)
        page.screenshot(path=str(folder / f"attach-answer-{look}.png"))

    # In the conversation, the next question attaches another file; once sent, the
    # composer holds no chip.
    lions = tmp_path / "lions.txt"
    lions.write_text(f"Notes from the zoo.\n\n{LIONS}\n")
    page.fill("#composer-input", "When do lions hunt?")
    choose_with_the_keyboard(page, lions)
    # The chip itself, not the "Attaching lions.txt…" that stands in for it meanwhile.
    expect(page.locator(".attachment-chip:not(.pending)", has_text="lions")).to_be_visible()
    page.press("#composer-input", "Enter")
    expect(page.locator(".msg-user").last.get_by_role("link", name="lions")).to_be_visible()
    expect(page.locator(".attachment-chip")).to_have_count(0)
    expect(page.locator(".msg-assistant").last.locator("blockquote").first).to_have_text(
        LIONS, timeout=30_000
    )

    with page.context.expect_page() as opened:
        attached.click()
    document = opened.value
    document.wait_for_load_state()
    expect(document).to_have_title("Zebra notes · Documents · Oracle")


def test_a_message_waits_for_a_file_still_on_its_way(
    page: Any, offline: OracleStack, tmp_path: Path
) -> None:
    offline.create_user("bea")
    log_in(page, offline.url, "bea")
    notes = tmp_path / "zebras.md"
    notes.write_text(NOTES)
    held: list[Any] = []
    page.route("**/attachments/", lambda route: held.append(route))  # answered when let through
    page.goto(f"{offline.url}/")
    page.fill("#composer-input", "How do zebras sleep?")

    choose_with_the_keyboard(page, notes)
    expect(page.locator(".attachment-chip.pending")).to_have_text("Attaching zebras.md…")
    page.press("#composer-input", "Enter")

    expect(page.locator("#attach-error")).to_have_text(
        "A file is still being attached: send once it shows above your message."
    )
    assert page.url == f"{offline.url}/"  # not sent
    held[0].continue_()
    expect(page.locator(".attachment-chip", has_text="Zebra notes")).to_be_visible()
    page.press("#composer-input", "Enter")
    sent = page.locator(".msg-user").last
    expect(sent.get_by_role("link", name="Zebra notes")).to_be_visible()


def a_drawing(path: Path) -> None:
    """A small PNG a person would know again: a sun over a field."""
    image = Image.new("RGB", (320, 200), (135, 190, 235))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 140, 320, 200), fill=(90, 160, 70))
    draw.ellipse((220, 30, 280, 90), fill=(250, 200, 40))
    image.save(path, format="PNG")


LOADED = "img => img.complete && img.naturalWidth"


def test_an_attached_image_is_sent_and_the_offline_model_says_it_cannot_see_it(
    page: Any, offline: OracleStack, tmp_path: Path
) -> None:
    offline.create_user("ivy")
    log_in(page, offline.url, "ivy")
    drawing = tmp_path / "field.png"
    a_drawing(drawing)
    page.goto(f"{offline.url}/")
    page.fill("#composer-input", "What does this picture show?")

    choose_with_the_keyboard(page, drawing)
    chip = page.locator(".attachment-chip:not(.pending)", has_text="field")
    expect(chip).to_be_visible()
    expect(chip.locator("img.attachment-thumb")).to_be_visible()
    page.wait_for_function(f"() => ({LOADED})(document.querySelector('.attachment-thumb'))")
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"attach-image-composer-{look}.png"))

    page.focus("#composer-input")
    page.keyboard.press("Enter")

    sent = page.locator(".msg-user").last
    expect(sent.get_by_role("link", name="field")).to_be_visible()
    expect(sent.locator("img.attachment-thumb")).to_be_visible()
    expect(page.locator(".attachment-chip")).to_have_count(0)
    answer = page.locator(".msg-assistant").last
    expect(answer).to_contain_text(
        "I cannot see images: field is attached, but the offline model reads text only, so I "
        "cannot tell you what it shows.",
        timeout=30_000,
    )
    cited = answer.get_by_role("link", name="field")
    expect(cited).to_have_attribute("href", re.compile(r"^/documents/\d+/$"))
    for folder, look in each_look(page, tmp_path):
        answer.scroll_into_view_if_needed()
        page.evaluate(TWO_FRAMES)
        page.screenshot(path=str(folder / f"attach-image-answer-{look}.png"))

    cited.focus()
    with page.context.expect_page() as opened:
        page.keyboard.press("Enter")
    document = opened.value
    document.wait_for_load_state()
    expect(document).to_have_title("field · Documents · Oracle")
    shown = document.locator(".document-picture img")
    expect(shown).to_have_attribute("alt", "field")
    assert shown.evaluate(LOADED) == 320  # the picture itself, loaded
    expect(document.locator(".document-view header")).to_contain_text("320 × 200 pixels")
    for folder, look in each_look(document, tmp_path):
        document.screenshot(path=str(folder / f"attach-image-document-{look}.png"))
        assert (
            document.evaluate("document.documentElement.scrollWidth")
            <= document.viewport_size["width"]
        )

    document.get_by_role("link", name="← Documents").click()
    row = document.locator(".document-row", has_text="field")
    expect(row.locator(".document-file")).to_have_text("Image · field.png · 320 × 200")
    assert row.locator("img.document-thumb").evaluate(LOADED) == 320
    for folder, look in each_look(document, tmp_path):
        document.screenshot(path=str(folder / f"attach-image-list-{look}.png"))
