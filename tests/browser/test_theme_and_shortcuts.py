"""A person in Chromium: a light or dark theme, a phone's small screen, keyboard shortcuts,
and what assistive technology needs (a heading, a name on every control, a focus ring)."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agents.testing.fake_server import FakeServer
from tests.browser.conftest import each_look, log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
TOOL_STEP = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]}
ANSWER = [
    "The calculator says **42**; see [the docs](https://example.com/docs).\n\n",
    "```python\n# Check it twice.\n@cache\ndef check(n: int) -> str:\n",
    '    return f"{n * 7} is {n % 2 == 0}"\n\n',
    "print(check(6), True, None, 0x2A)\n```\n\n",
    "So `6 * 7` is the answer.",
]

# Colours as the browser computes them, and WCAG's contrast ratio between two of them.
COLOUR = """
  const rgba = (c) => {
    const n = c.match(/[\\d.]+/g).map(Number);
    return [n[0], n[1], n[2], n.length > 3 ? n[3] : 1];
  };
  const over = (top, under) =>
    top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3])).concat(1);
  const background = (el) => {  // its ancestors' backgrounds, composited
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const bg = rgba(getComputedStyle(e).backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] >= 1) break;
    }
    return layers.reduceRight((under, top) => over(top, under), [255, 255, 255, 1]);
  };
  const luminance = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
"""

# Every piece of text shown against what is behind it: 4.5:1, or 3:1 for large text.
TEXT_CONTRAST = (
    "(selectors) => {"
    + COLOUR
    + """
  const opaque = (el) => {
    for (let e = el; e; e = e.parentElement) {
      if (parseFloat(getComputedStyle(e).opacity) < 1) return false;
    }
    return true;
  };
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1 && !el.closest('.visually-hidden')
      && el.checkVisibility({visibilityProperty: true});
  };
  const measure = (el) => {
    const style = getComputedStyle(el), bg = background(el), size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && parseInt(style.fontWeight) >= 700);
    return {
      text: (el.value || el.textContent).trim().slice(0, 40),
      tag: el.tagName + '.' + el.className,
      ratio: Math.round(100 * ratio(over(rgba(style.color), bg), bg)) / 100,
      need: large ? 3 : 4.5,
    };
  };
  const hasText = (el) => [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())
    || el.matches('input:not([type=hidden], [type=range], [type=checkbox]), select');
  const texts = [...document.querySelectorAll('body *')]
    .filter((el) => hasText(el) && !el.matches('option, script, style') && shown(el) && opaque(el));
  const named = {};
  for (const selector of selectors) {
    const el = [...document.querySelectorAll(selector)].find(shown);
    named[selector] = el ? measure(el).ratio : null;
  }
  const failing = texts.map(measure).filter((m) => m.ratio < m.need);
  return {checked: texts.length, named, failing};
}"""
)

# The focused element's outline: drawn, at least 2px, and 3:1 against what is around it.
FOCUS_RING = (
    "() => {"
    + COLOUR
    + """
  const el = document.activeElement, style = getComputedStyle(el);
  const around = el.parentElement ? background(el.parentElement) : [255, 255, 255, 1];
  return {
    element: `${el.tagName}#${el.id}.${el.className} ${(el.textContent || '').trim().slice(0, 20)}`,
    style: style.outlineStyle,
    width: parseFloat(style.outlineWidth),
    ratio: ratio(rgba(style.outlineColor), around),
    start: el === document.body,
  };
}"""
)

# Controls shown to assistive technology without an accessible name.
UNNAMED_CONTROLS = """() => {
  const text = (el) => {
    if (el.nodeType === 3) return el.textContent;
    if (el.nodeType !== 1 || el.getAttribute('aria-hidden') === 'true') return '';
    if (el.tagName === 'IMG') return el.alt || '';
    return [...el.childNodes].map(text).join('');
  };
  const name = (el) => {
    const by = el.getAttribute('aria-labelledby');
    const byId = (id) => document.getElementById(id);
    if (by) return by.split(/\\s+/).map(byId).map((n) => (n ? text(n) : '')).join(' ');
    if (el.getAttribute('aria-label')) return el.getAttribute('aria-label');
    if (el.labels && el.labels.length) return [...el.labels].map(text).join(' ');
    if (el.matches('button, a')) return text(el) || el.title || '';
    return el.title || '';
  };
  return [...document.querySelectorAll('button, input, select, textarea, a[href]')]
    .filter((el) => el.type !== 'hidden' && !el.closest('[hidden], [aria-hidden=true]'))
    .filter((el) => !name(el).trim())
    .map((el) => el.outerHTML.slice(0, 120));
}"""

# How much of the viewport shows the conversation: from the top of #messages (or of the
# scroller) to the composer, whichever way the reader has scrolled.
MESSAGES_IN_VIEW = """() => {
  const main = document.getElementById('main');
  const seen = () => {
    const m = document.getElementById('messages').getBoundingClientRect();
    const box = main.getBoundingClientRect();
    const composer = document.getElementById('composer').getBoundingClientRect();
    return Math.min(m.bottom, box.bottom, composer.top, innerHeight) - Math.max(m.top, box.top, 0);
  };
  main.scrollTop = 0;
  const top = seen();
  main.scrollTop = main.scrollHeight;
  return Math.min(top, seen());
}"""


# The first element that Tab reaches.
FIRST_IN_TAB_ORDER = """() => [...document.querySelectorAll('a[href], button, input, textarea')]
  .find((el) => el.tabIndex >= 0 && el.checkVisibility() && !el.disabled).textContent.trim()"""


@dataclass(frozen=True)
class Conversation:
    person: str
    url: str


@pytest.fixture(scope="module")
def conversation(browser: Any, stack: OracleStack, fake_provider: FakeServer) -> Conversation:
    """One conversation with every kind of message in it: the user's, a tool step, System
    notices (a warning ahead of the limit, then the stop's) and a stopped answer with a link,
    a code block and its badge."""
    # Set up again whenever xdist gives this worker the module's tests anew: a new person.
    person = f"theme-reader-{uuid.uuid4().hex[:8]}"
    client = stack.client(stack.create_user(person))
    assert client.patch("/api/settings/", json={"max_iterations": 3}).status_code == 200
    fake_provider.set_script([TOOL_STEP, {"text": ANSWER, "hang": True}])
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        log_in(page, stack.url, person)
        page.click("text=New conversation")
        page.fill("#composer-input", "What is 6*7, and show me the code")
        page.press("#composer-input", "Enter")
        page.wait_for_selector(".msg-assistant >> text=is the answer")
        page.click("#run-controls button.stop")
        page.wait_for_selector(".msg-system >> text=You stopped the run.")
        return Conversation(person, page.url)
    finally:
        context.close()


@pytest.fixture
def reader(page: Any, stack: OracleStack, conversation: Conversation) -> Iterator[Any]:
    """The conversation's owner, logged in, on the conversation's page."""
    log_in(page, stack.url, conversation.person)
    page.goto(conversation.url)
    page.wait_for_selector(".msg-system")
    yield page


def _is_dark(page: Any) -> bool:
    """The page's background is dark, and so are its form controls (or they follow the
    system, which is dark)."""
    return page.evaluate(
        """() => {
          const body = getComputedStyle(document.body).backgroundColor;
          const [r, g, b] = body.match(/\\d+/g).map(Number);
          const dark = r + g + b < 150, seen = dark ? 'dark' : 'light';
          const scheme = getComputedStyle(document.documentElement).colorScheme;
          const system = matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
          if (scheme !== seen && !(scheme === 'light dark' && system === seen)) {
            throw new Error(`background ${body} but color-scheme ${scheme}`);
          }
          return dark;
        }"""
    )


def _screenshots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("ORACLE_VAR_DIR", tmp_path)) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# --- the theme ----------------------------------------------------------------------------


def test_the_theme_follows_the_system_until_chosen_and_the_choice_is_kept(
    page: Any, stack: OracleStack
) -> None:
    page.emulate_media(color_scheme="dark")
    page.goto(f"{stack.url}/login/")
    toggle = page.locator("#theme-toggle")
    expect(toggle).to_have_accessible_name("Theme: System")
    assert _is_dark(page)

    toggle.click()
    expect(toggle).to_have_accessible_name("Theme: Light")
    assert not _is_dark(page)
    page.reload()  # remembered, whatever the system says
    expect(toggle).to_have_accessible_name("Theme: Light")
    assert not _is_dark(page)

    toggle.click()
    expect(toggle).to_have_accessible_name("Theme: Dark")
    page.emulate_media(color_scheme="light")
    page.goto(f"{stack.url}/signup/")
    assert _is_dark(page)

    page.locator("#theme-toggle").click()
    expect(page.locator("#theme-toggle")).to_have_accessible_name("Theme: System")
    assert not _is_dark(page)
    page.emulate_media(color_scheme="dark")  # the system changes while the page is open
    assert _is_dark(page)


def test_the_chosen_theme_is_set_before_the_page_is_drawn_on_every_page(
    page: Any, stack: OracleStack, conversation: Conversation
) -> None:
    # What <html> says when <body> first appears: the page is not drawn before that.
    page.context.add_init_script(
        """new MutationObserver((_, observer) => {
             if (!document.body) return;
             window.themeAtFirstBody = document.documentElement.dataset.theme;
             observer.disconnect();
           }).observe(document, {childList: true, subtree: true});"""
    )
    page.emulate_media(color_scheme="light")
    page.goto(f"{stack.url}/login/")
    page.evaluate("localStorage.setItem('oracle-theme', 'dark')")
    log_in(page, stack.url, conversation.person)
    for path in ("/login/", "/signup/", conversation.url, "/", "/settings/"):
        page.goto(path if path.startswith("http") else f"{stack.url}{path}")
        assert page.evaluate("window.themeAtFirstBody") == "dark", path
        assert _is_dark(page), path
        expect(page.locator("#theme-toggle")).to_have_accessible_name("Theme: Dark")


def test_text_is_readable_in_both_themes_on_every_page(
    reader: Any, stack: OracleStack, conversation: Conversation, tmp_path: Path
) -> None:
    page = reader
    folder = _screenshots(tmp_path)
    named = {
        "/c/": [
            ".msg-assistant .msg-body p",  # text on a panel
            ".msg-user .msg-body",
            ".sidebar-title",  # muted text on a panel
            ".tool-step .tool-status",
            ".msg-assistant .msg-body a",  # a link
            ".msg-assistant .badge",
            ".msg-system .system-text",  # System messages
            ".msg-system.severity-warning .system-text",
            ".msg-system .severity",
            ".msg-body pre .c1",  # code and its highlighting
            ".msg-body pre .k",
            ".msg-body pre .s2",
            ".msg-body pre .nf",
            ".msg-body pre .mi",
            ".msg-body code",
        ],
        "/settings/": [".settings-group legend", ".setting .help", ".settings-nav a"],
        "/login/": [".auth-card h1", ".auth-card label", ".auth-card a", "button.primary"],
    }
    pages = {"chat": conversation.url, "settings": "/settings/", "login": "/login/"}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.context.clear_cookies()  # the login page is visited logged out
        log_in(page, stack.url, conversation.person)
        for name, path in pages.items():
            if name == "login":
                page.context.clear_cookies()
            page.set_viewport_size(DESKTOP)
            page.goto(path if path.startswith("http") else f"{stack.url}{path}")
            assert _is_dark(page) == (scheme == "dark")
            key = "/c/" if name == "chat" else path
            found = page.evaluate(TEXT_CONTRAST, named[key])
            assert found["checked"] > 10
            missing = [selector for selector, ratio in found["named"].items() if ratio is None]
            assert missing == [], f"{scheme} {name}: nothing shown for {missing}"
            assert found["failing"] == [], f"{scheme} {name}: too little contrast"
            sizes = (
                {"desktop": DESKTOP} if name == "login" else {"desktop": DESKTOP, "phone": PHONE}
            )
            for device, size in sizes.items():
                page.set_viewport_size(size)
                page.wait_for_timeout(300)  # the sidebar folds away with a transition
                suffix = f"-{device}" if name != "login" else ""
                page.screenshot(path=str(folder / f"{name}-{scheme}{suffix}.png"))


# --- a phone ------------------------------------------------------------------------------


def test_on_a_phone_the_conversation_gets_the_screen(reader: Any, stack: OracleStack) -> None:
    page = reader
    page.set_viewport_size(PHONE)
    page.reload()
    page.wait_for_selector(".msg-system")
    page.wait_for_timeout(300)

    assert page.evaluate(MESSAGES_IN_VIEW) >= 0.55 * PHONE["height"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    gauges = page.locator("#gauges").bounding_box()
    assert gauges is not None and gauges["height"] < 80  # compact: at most three lines
    assert page.locator("#gauges").evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    composer = page.locator("#composer").bounding_box()
    assert composer is not None and composer["y"] + composer["height"] > PHONE["height"] - 20

    topbar = page.locator(".topbar")  # Settings and Log out are in a menu
    expect(topbar.get_by_role("link", name="Settings")).to_be_hidden()
    page.click("#account-button")
    expect(topbar.get_by_role("link", name="Settings")).to_be_visible()
    expect(topbar.get_by_role("button", name="Log out")).to_be_visible()
    page.keyboard.press("Escape")
    expect(topbar.get_by_role("link", name="Settings")).to_be_hidden()

    for path in ("/settings/", "/", "/login/"):
        page.goto(f"{stack.url}{path}")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path


# --- keyboard shortcuts -------------------------------------------------------------------


def test_keyboard_shortcuts_are_listed_under_question_mark_and_work(
    reader: Any, stack: OracleStack
) -> None:
    page = reader
    help_dialog = page.locator("dialog#shortcuts-help")
    page.keyboard.type("?")  # typing in the composer: a question mark, not the help
    expect(page.locator("#composer-input")).to_have_value("?")
    expect(help_dialog).to_be_hidden()

    page.locator(".chat-header button.danger").focus()
    page.keyboard.press("?")
    expect(help_dialog).to_be_visible()
    assert page.evaluate(
        "document.getElementById('shortcuts-help').contains(document.activeElement)"
    )
    for shortcut in ("?", "Ctrl+Shift+O", "/", "Esc", "Shift+Esc", "Enter", "Shift+Enter"):
        exactly = re.compile(f"^{re.escape(shortcut)}$")
        expect(help_dialog.locator("dt > kbd").filter(has_text=exactly)).to_be_visible()
    page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()
    assert page.evaluate("document.activeElement.textContent.trim()") == "Delete"

    page.click("#shortcuts-button")  # the same help from the top bar
    expect(help_dialog).to_be_visible()
    help_dialog.get_by_role("button", name="Close").click()
    expect(help_dialog).to_be_hidden()
    expect(page.locator("#shortcuts-button")).to_be_focused()

    page.keyboard.press("/")  # from a button: to the composer, nothing typed
    expect(page.locator("#composer-input")).to_be_focused()
    expect(page.locator("#composer-input")).to_have_value("?")
    page.locator("#title").focus()
    page.keyboard.press("Shift+Escape")  # from another field
    expect(page.locator("#composer-input")).to_be_focused()

    page.keyboard.press("Control+Shift+O")  # even while typing
    page.wait_for_url(f"{stack.url}/")


def test_on_a_fresh_chat_page_escape_leaves_the_composer_and_question_mark_shows_the_help(
    reader: Any, stack: OracleStack, tmp_path: Path
) -> None:
    page, composer = reader, reader.locator("#composer-input")
    help_dialog = page.locator("dialog#shortcuts-help")
    expect(composer).to_be_focused()  # the page opens ready to write
    page.keyboard.type("Draft?")
    expect(help_dialog).to_be_hidden()

    page.keyboard.press("Escape")  # no answer being written: out of the composer
    expect(composer).not_to_be_focused()
    expect(composer).to_have_value("Draft?")  # what was typed stays
    page.keyboard.press("?")
    expect(help_dialog).to_be_visible()
    escape = help_dialog.locator("xpath=.//dt[normalize-space(.)='Esc']/following-sibling::dd[1]")
    expect(escape).to_contain_text("leave the message box")
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"shortcuts-help-{look}.png"))

    page.keyboard.press("Escape")  # closes the help only
    expect(help_dialog).to_be_hidden()
    page.keyboard.press("/")  # and back to writing
    expect(composer).to_be_focused()
    expect(composer).to_have_value("Draft?")


# --- accessibility ------------------------------------------------------------------------


def test_every_page_has_a_heading_named_controls_a_skip_link_and_a_focus_ring(
    reader: Any, stack: OracleStack, conversation: Conversation
) -> None:
    page = reader
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.context.clear_cookies()  # the login page is visited logged out
        log_in(page, stack.url, conversation.person)
        for path in (conversation.url, "/settings/", "/login/"):
            if path == "/login/":
                page.context.clear_cookies()
            page.goto(path if path.startswith("http") else f"{stack.url}{path}")
            page.wait_for_load_state("load")
            assert page.locator("h1").count() == 1, path
            assert page.evaluate(UNNAMED_CONTROLS) == [], path

            skip = page.get_by_role("link", name="Skip to content")
            assert page.evaluate(FIRST_IN_TAB_ORDER) == "Skip to content", path
            skip.focus()
            box = skip.bounding_box()
            assert box is not None and box["width"] > 20 and box["y"] >= 0  # shown
            unringed = []
            for _ in range(150):
                ring = page.evaluate(FOCUS_RING)
                if ring["start"]:
                    break
                if ring["style"] == "none" or ring["width"] < 2 or ring["ratio"] < 3:
                    unringed.append(ring)
                page.keyboard.press("Tab")
            assert unringed == [], f"{scheme} {path}: no visible focus ring"

            skip.focus()
            page.keyboard.press("Enter")  # skip to content: the next Tab lands in main
            page.keyboard.press("Tab")
            assert page.evaluate("document.getElementById('main').contains(document.activeElement)")
