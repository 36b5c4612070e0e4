"""A person walks Oracle's pages in Chromium under its Content-Security-Policy and
nothing is refused: a conversation with Markdown, maths, an attached image and a tool's
picture, an answer streamed live over the WebSocket, the sidebar and theme buttons, the
settings, tools, documents and dashboard pages. Inline code a page did not ship (a
script put in by hand) is refused, so the watch would have seen any refusal."""

from __future__ import annotations

import base64
import io
import re
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import Error, expect

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.browser.conftest import log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser

# Each document records what its policy refused (Playwright runs this before the page's
# own scripts, outside the policy).
WATCH = """
window.__refused = [];
document.addEventListener("securitypolicyviolation", (e) => window.__refused.push(
  `${e.effectiveDirective} refused ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`
));
"""
ANSWER = (
    "# Circles\n\n**Bold**, `code` and a table:\n\n| r | area |\n|---|---|\n| 1 | $\\pi$ |\n\n"
    "The area is $\\pi r^2$, and\n\n"
    "$$\n\\sum_{n=1}^{\\infty} \\frac{1}{n^2} = \\frac{\\pi^2}{6}\n$$\n"
)


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 24), "teal").save(out, "PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def ready(mcp_stack: OracleStack) -> OracleStack:
    """The stack once its worker has the testing server (whose `picture` tool draws)."""
    with mcp_stack.client(mcp_stack.create_user("csp-watcher")) as client:
        processes.wait_for(
            lambda: client.get("/healthz").json().get("mcp_servers", {}).get("testing") == "ready",
            30,
        )
    return mcp_stack


class Walk:
    """A tab that checks, on every page it opens, the policy header and what was refused."""

    def __init__(self, page: Any, url: str) -> None:
        self.page, self.url = page, url
        self.console: list[str] = []
        page.on("console", self._console)
        page.context.add_init_script(WATCH)

    def _console(self, message: Any) -> None:
        if "Content Security Policy" in message.text:
            self.console.append(message.text)

    def open(self, path: str) -> None:
        response = self.page.goto(self.url + path)
        assert response is not None
        assert "script-src 'self'" in response.headers.get("content-security-policy", ""), path

    def refused(self) -> list[str]:
        return list(self.page.evaluate("window.__refused || []"))


def test_the_pages_work_under_the_policy_and_nothing_is_refused(
    page: Any, ready: OracleStack, fake_provider: FakeServer
) -> None:
    name = "csp-person"
    client = ready.client(ready.create_user(name))
    staffed = processes.shell(
        f"from django.contrib.auth.models import User; User.objects.filter(username={name!r})"
        ".update(is_staff=True)",
        env=ready.env,
    )
    assert staffed.returncode == 0, staffed.stderr
    picture = client.post("/api/documents/", files={"file": ("teal.png", png(), "image/png")})
    assert picture.status_code == 201, picture.text
    image_id = picture.json()["id"]
    fake_provider.set_script(
        [{"tool_calls": [{"name": "testing__picture", "arguments": {}}]}, {"text": [ANSWER]}]
    )
    conversation = client.post("/api/conversations/", json={"title": "Circles"}).json()["id"]
    posted = client.post(
        f"/api/conversations/{conversation}/messages/",
        json={"content": "Circles, with a picture", "documents": [image_id]},
    )
    assert posted.status_code == 202, posted.text
    processes.wait_for(
        lambda: client.get(f"/api/runs/{posted.json()['run_id']}/").json()["status"] == "finished",
        30,
    )
    walk = Walk(page, ready.url)
    refused: dict[str, list[str]] = {}

    walk.open("/login/")
    log_in(page, ready.url, name)

    # The conversation: Markdown, maths typeset, the attached image and the tool's picture.
    walk.open(f"/c/{conversation}/")
    answer = page.locator(".msg-assistant").last
    expect(answer.locator("h1")).to_have_text("Circles")
    expect(answer.locator("table")).to_be_visible()
    expect(answer.locator(".math.block .katex-display")).to_be_visible()
    thumb = page.locator(".msg-user img.attachment-thumb")
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 32", arg=thumb.element_handle()
    )
    step = page.locator(".tool-step", has_text="testing__picture")
    step.locator("summary").click()
    drawn = step.locator("img.tool-picture")
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 96", arg=drawn.element_handle()
    )
    # A new question, answered live over the WebSocket, its maths typeset as it comes.
    fake_provider.set_script([{"text": ["Live: ", "$e^{i\\pi} + 1 = 0$", " indeed."]}])
    page.fill("#composer-input", "And Euler?")
    page.press("#composer-input", "Enter")
    expect(page.locator(".msg-assistant").last).to_contain_text("indeed.", timeout=20_000)
    expect(page.locator(".msg-assistant").last.locator(".katex")).to_have_count(1)
    # The theme button, kept over a reload by the script that runs before the first paint.
    theme = page.locator("html").get_attribute("data-theme")
    page.click("#theme-toggle")
    chosen = page.locator("html").get_attribute("data-theme")
    assert chosen != theme
    refused["conversation"] = walk.refused()
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", chosen or "")
    # The sidebar's button, on a phone.
    page.set_viewport_size({"width": 390, "height": 844})
    toggle = page.locator(".sidebar-toggle")
    toggle.click()
    expect(page.locator("body")).to_have_class(re.compile(r"\bsidebar-open\b"))
    expect(toggle).to_have_attribute("aria-expanded", "true")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.set_viewport_size({"width": 1280, "height": 900})
    refused["conversation, reloaded"] = walk.refused()

    walk.open("/settings/")
    expect(page.locator("html")).to_have_class(re.compile(r"\bjs\b"))  # scripted controls shown
    expect(page.locator(".settings-submit")).to_be_hidden()
    refused["settings"] = walk.refused()

    walk.open("/tools/")
    expect(page.locator("#mcp-title")).to_be_visible()
    refused["tools"] = walk.refused()

    walk.open("/documents/")
    listed = page.locator("img.document-thumb").first
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 32", arg=listed.element_handle()
    )
    refused["documents"] = walk.refused()

    walk.open(f"/documents/{image_id}/")
    shown = page.locator(".document-picture img")
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 32", arg=shown.element_handle()
    )
    refused["document"] = walk.refused()

    walk.open("/dashboard/")
    charts = page.locator("canvas[data-chart]")
    expect(page.locator("html")).to_have_attribute("data-charts-drawn", str(charts.count()))
    refused["dashboard"] = walk.refused()

    walk.open("/no-such-page/")
    refused["404"] = walk.refused()

    assert {where: said for where, said in refused.items() if said} == {}
    assert walk.console == []

    # The watch sees a refusal: a script put in the page by hand does not run.
    with pytest.raises(Error, match="violates the following Content Security Policy"):
        page.add_script_tag(content="window.__ran = true")
    page.wait_for_function("() => window.__refused.length > 0")
    assert page.evaluate("window.__ran === undefined")
    assert "script-src-elem refused inline" in walk.refused()[0]


def test_a_tool_picture_from_elsewhere_is_not_loaded(page: Any, ready: OracleStack) -> None:
    """Only Oracle's own images and data: URLs load: an address elsewhere is refused
    (a page's words that got past the sanitiser could not call home with one)."""
    name = "csp-elsewhere"
    ready.create_user(name)
    walk = Walk(page, ready.url)
    walk.open("/login/")
    log_in(page, ready.url, name)
    data = "data:image/png;base64," + base64.b64encode(png()).decode()

    page.evaluate(
        """([data]) => {
          for (const src of ["https://example.com/pixel.png", data]) {
            const img = document.createElement("img");
            img.src = src;
            document.body.append(img);
          }
        }""",
        [data],
    )

    page.wait_for_function("() => window.__refused.length > 0")
    assert walk.refused() == [walk.refused()[0]]
    assert "img-src refused https://example.com/pixel.png" in walk.refused()[0]
