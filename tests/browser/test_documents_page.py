"""The Documents page in a real browser: a file chosen and a file dropped are uploaded with
a progress bar each, a refused one says why next to it, the list refreshes, Delete asks
first; screenshots in both themes on a desktop and a phone."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import each_look, sign_up
from tests.knowledge.conftest import pdf

pytestmark = pytest.mark.browser
_users = itertools.count(1)

# Every upload's progress events, as the page's own XMLHttpRequest reports them.
RECORD_PROGRESS = """
window.uploadProgress = [];
const send = XMLHttpRequest.prototype.send;
XMLHttpRequest.prototype.send = function (body) {
  this.upload.addEventListener("progress", (e) => window.uploadProgress.push([e.loaded, e.total]));
  return send.call(this, body);
};
"""
DROP = """([name, text, type]) => {
  const files = new DataTransfer();
  files.items.add(new File([text], name, {type}));
  return files;
}"""


@pytest.fixture
def documents_page(page: Any, live_server_url: str) -> Any:
    page.add_init_script(RECORD_PROGRESS)
    sign_up(page, live_server_url, f"documents-user-{next(_users)}")
    page.goto(f"{live_server_url}/documents/")
    return page


def drop(page: Any, name: str, text: str, kind: str = "text/markdown") -> None:
    files = page.evaluate_handle(DROP, [name, text, kind])
    page.dispatch_event("#upload-form", "drop", {"dataTransfer": files})


def test_upload_with_progress_then_delete(documents_page: Any, tmp_path: Path) -> None:
    page = documents_page
    guide = page.locator(".document-row.builtin")
    expect(guide).to_contain_text("Oracle user guide")
    expect(guide).to_contain_text("Built-in")
    expect(guide.get_by_role("button", name="Delete")).to_have_count(0)

    report = tmp_path / "zebra-report.pdf"
    report.write_bytes(pdf(["Zebras sleep standing up."] * 30, ["Page two."] * 30))
    page.set_input_files("#upload-file", str(report))

    upload = page.locator(".upload", has_text="zebra-report.pdf")
    expect(upload).to_contain_text("Added: 2 passages to search.")
    assert upload.locator("progress").evaluate("bar => bar.value") == 100
    loaded, total = page.evaluate("window.uploadProgress.at(-1)")
    assert loaded == total > report.stat().st_size
    row = page.locator(".document-row", has_text="zebra-report")
    expect(row).to_contain_text("2")  # passages
    expect(page.locator(".document-row")).to_have_count(2)

    drop(page, "savanna.md", "# Savanna notes\n\nGrass, acacias and zebras.")
    expect(page.locator(".upload", has_text="savanna.md")).to_contain_text("Added: 1 passage")
    expect(page.locator(".document-row", has_text="Savanna notes")).to_be_visible()

    drop(page, "slides.pptx", "PK", "application/octet-stream")
    refused = page.locator(".upload", has_text="slides.pptx")
    expect(refused.locator(".upload-status")).to_have_text(
        "slides.pptx is not a file Oracle can read: upload Markdown (.md), text (.txt), "
        "HTML (.html), PDF (.pdf) or an image (.png, .jpg, .gif, .webp)."
    )
    expect(refused).to_have_class("upload failed")
    expect(page.locator(".document-row")).to_have_count(3)
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"documents-{look}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
        if look.endswith("phone"):
            page.locator("#your-documents").scroll_into_view_if_needed()
            page.screenshot(path=str(folder / f"documents-{look}-list.png"))
            page.locator("#main").evaluate("main => main.scrollTo(0, 0)")

    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Delete zebra-report").click()
    expect(page.locator(".document-row", has_text="zebra-report")).to_have_count(0)
    expect(page.locator(".document-row")).to_have_count(2)
    page.reload()
    expect(page.locator(".document-row", has_text="zebra-report")).to_have_count(0)


FIELD_GUIDE = """# Zebra field guide

Notes from the **savanna**, kept as _Markdown_.

## Habitat

> Where the grass is, the zebras are.

- open grassland
- light woodland

| animal | legs | stripes |
| --- | --- | --- |
| zebra | 4 | yes |
| quagga | 4 | half |

## Counting

```python
def count(herd):
    return sum(1 for zebra in herd if zebra.stripes)
```

Count twice, at dawn and at dusk, and keep the larger `count`: a herd of $n$ zebras
shows $2n$ flanks.
"""


def test_a_markdown_document_reads_rendered(documents_page: Any, tmp_path: Path) -> None:
    page = documents_page
    drop(page, "field-guide.md", FIELD_GUIDE)
    page.locator(".document-title a", has_text="Zebra field guide").click()

    text = page.locator(".document-text")
    expect(text.locator("strong")).to_have_text("savanna")
    expect(text.locator("h2")).to_have_text(["Habitat", "Counting"])
    expect(text.locator("blockquote")).to_contain_text("Where the grass is")
    expect(text.locator("td")).to_have_count(6)
    expect(text.locator(".code-lang")).to_have_text("python")
    expect(text.locator("pre .k").first).to_have_text("def")  # highlighted as in the chat
    expect(text).not_to_contain_text("**")
    expect(text.locator(".math .katex")).to_have_count(2)  # typeset, as in the chat

    page.locator(".documents-nav a", has_text="Counting").click()
    expect(text.locator("h2", has_text="Counting")).to_be_in_viewport()
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"document-markdown-{look}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


def test_a_text_document_reads_as_it_was_written(documents_page: Any, tmp_path: Path) -> None:
    page = documents_page
    drop(page, "log.txt", "FIELD LOG\n\n**Day 1**  zebras: 12\n    - at the river\n", "text/plain")
    page.locator(".document-title a", has_text="log").click()

    text = page.locator(".document-text")
    expect(text).to_contain_text("**Day 1**  zebras: 12")  # no Markdown read into it
    # Retried: the click's page may be read before its stylesheet has arrived.
    expect(text).to_have_css("white-space", "pre-wrap")
    expect(text.locator("strong, li")).to_have_count(0)
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"document-text-{look}.png"))
