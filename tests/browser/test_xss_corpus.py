"""Hostile input, judged by what runs in Chromium: every payload of `xss_payloads` goes
through every field that reaches a page (messages, the model's streamed and final text,
tool names, arguments and results, a helper's task and steps, documents, titles, search,
settings, token names, the staff pages), and the test fails if any of them runs.

A payload that runs reports its id: it pushes it onto `top.__xss` (which hands it to the
test at once, so a payload that navigates away is not lost), posts it to the top window,
opens a dialog, or makes the browser ask for `/xss-<id>` (markup that loads, htmx that
fires). After each page has settled the test opens every <details>, moves the mouse and
the focus over every element and follows every link that is not a web link (javascript:
only runs when clicked). The first test proves the detector sees payloads that run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
from markdown_it import MarkdownIt
from playwright.sync_api import expect

from agents.config import FIELDS
from agents.testing.fake_server import FakeServer
from tests import processes
from tests.browser.conftest import PASSWORD, each_look, log_in
from tests.browser.xss_payloads import (
    BY_ID,
    PAYLOADS,
    Payload,
    joined,
    one_line,
    packed,
    payload_with,
)
from tests.stack import OracleStack

pytestmark = pytest.mark.browser
STAFF = "xss-staff"
SETTLE_MS = 300  # for images to fail, frames to load and htmx to fire
END = "End of the corpus."

# The sink: pushes reach the test through a binding at once; frames of another origin
# post "xss:<id>" to the top window. It cannot be replaced or clobbered by the page.
DETECTOR = """
(() => {
  if (Object.getOwnPropertyDescriptor(window, "__xss")) return;
  const sink = [];
  sink.push = function (...ids) {
    for (const id of ids) { try { window.__xssReport(String(id)); } catch (e) { /* gone */ } }
    return Array.prototype.push.apply(sink, ids);
  };
  Object.defineProperty(window, "__xss", { value: sink, writable: false, configurable: false });
  window.addEventListener("message", (event) => {
    const data = event.data;
    if (typeof data === "string" && data.startsWith("xss:")) sink.push(data.slice(4));
  });
})();
"""
# What a person might do to everything on the page, short of pressing its buttons.
EXERCISE = """
() => {
  const kinds = {
    mouseover: MouseEvent, mouseenter: MouseEvent, mousemove: MouseEvent, mouseout: MouseEvent,
    pointerover: PointerEvent, pointerenter: PointerEvent,
    focus: FocusEvent, focusin: FocusEvent, blur: FocusEvent,
  };
  const quiet = new Set(["mouseenter", "pointerenter", "focus", "blur"]);  // they do not bubble
  const XLINK = "http://www.w3.org/1999/xlink";
  const visit = (doc) => {
    for (const details of doc.querySelectorAll("details")) details.open = true;
    for (const element of doc.querySelectorAll("body *")) {
      for (const [type, Kind] of Object.entries(kinds)) {
        element.dispatchEvent(new Kind(type, { bubbles: !quiet.has(type) }));
      }
    }
    for (const link of doc.querySelectorAll("a, area")) {
      const href = link.getAttribute("href") ?? link.getAttributeNS(XLINK, "href");
      if (href === null) continue;
      let protocol;
      try { protocol = new URL(href, doc.baseURI).protocol; } catch (e) { continue; }
      if (["http:", "https:", "mailto:"].includes(protocol)) continue;  // it would leave the page
      link.removeAttribute("target");  // run here, not in a new tab
      link.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
    }
    for (const frame of doc.querySelectorAll("iframe, frame, object, embed")) {
      let inner = null;
      try { inner = frame.contentDocument; } catch (e) { /* another origin */ }
      if (inner) visit(inner);
    }
  };
  visit(document);
}
"""
MARKER = re.compile(r"xss-(x\d{3})")  # in a request's host or path


@dataclass
class Detector:
    """Watches one browser context for payloads that run, noting on which page."""

    labels: dict[Any, str] = field(default_factory=dict)  # page -> what it shows
    ran: list[tuple[str, str]] = field(default_factory=list)  # (payload id, page)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (url, page)
    dialogs: list[tuple[str, str]] = field(default_factory=list)  # (message, page)
    popups: list[tuple[str, str]] = field(default_factory=list)  # (url, page)

    def attach(self, context: Any) -> None:
        context.expose_binding("__xssReport", self._report)
        context.add_init_script(DETECTOR)
        context.on("request", lambda request: self._request(request.url, _page_of(request)))
        context.on("dialog", self._dialog)
        context.on("page", self._page)

    def _label(self, page: Any) -> str:
        return self.labels.get(page, page.url if page is not None else "?")

    def _report(self, source: dict[str, Any], id_: str) -> None:
        self.ran.append((id_, self._label(source.get("page"))))

    def _page(self, page: Any) -> None:
        page.on("websocket", lambda socket: self._request(socket.url, page))
        opener = page.opener()
        if opener is not None:
            self.popups.append((page.url, self._label(opener)))

    def _request(self, url: str, page: Any) -> None:
        parts = urlsplit(url)
        if MARKER.search(parts.netloc + parts.path):
            self.requests.append((url, self._label(page)))

    def _dialog(self, dialog: Any) -> None:
        if dialog.type == "beforeunload":  # the settings page asks before losing an edit
            dialog.accept()
            return
        self.dialogs.append((f"{dialog.type}: {dialog.message}", self._label(dialog.page)))
        dialog.dismiss()

    def ids(self) -> set[str]:
        """The payloads (and controls) seen running, by any channel."""
        found = {id_ for id_, _ in self.ran}
        found |= {m[1] for url, _ in self.requests if (m := MARKER.search(url))}
        found |= {m[0] for text, _ in self.dialogs if (m := re.search(r"x\d{3}|control\w*", text))}
        return found

    def forget(self) -> None:
        self.ran.clear()
        self.requests.clear()
        self.dialogs.clear()
        self.popups.clear()

    def exercise(self, page: Any, settle: bool = True) -> None:
        """Do to the page what a curious person would, then let it settle."""
        page.evaluate(EXERCISE)
        if settle:
            page.wait_for_timeout(SETTLE_MS)

    def wait_until(self, page: Any, enough: Any, timeout_ms: int = 15_000) -> None:
        """Let the page run until `enough(self.ids())` holds (the controls have fired, on a
        busy machine later than SETTLE_MS), or `timeout_ms` has passed."""
        waited = 0
        while not enough(self.ids()) and waited < timeout_ms:
            page.wait_for_timeout(50)  # events from the browser are taken in meanwhile
            waited += 50

    def check(self, page: Any, where: str) -> None:
        """Exercise the page, then fail if anything ran; `where` names it in the report."""
        self.labels[page] = where
        _shows_payloads(page, where)
        self.exercise(page)
        self.assert_nothing_ran()

    def check_pages(self, context: Any, pages: dict[str, str], batch: int = 12) -> None:
        """Open each page (what it shows: its address) in a tab of its own, a batch at a
        time loading together; exercise them and fail if anything ran."""
        items = list(pages.items())
        for start in range(0, len(items), batch):
            tabs = []
            for where, url in items[start : start + batch]:
                tab = context.new_page()
                self.labels[tab] = where
                answer = tab.goto(url, wait_until="commit")
                # A page refusing what it was sent answers 400 or 403: it is still the page.
                assert answer.status in (200, 400, 403) and answer.url == url, (
                    where,
                    answer.status,
                )
                tabs.append(tab)
            for tab in tabs:
                tab.wait_for_load_state("load")
                _shows_payloads(tab, self.labels[tab])
                self.exercise(tab, settle=False)
            tabs[-1].wait_for_timeout(SETTLE_MS)
            for tab in tabs:
                tab.close()
            self.assert_nothing_ran()

    def assert_nothing_ran(self) -> None:
        problems = [f"{id_} ran on {at}: {_shown(id_)}" for id_, at in self.ran]
        problems += [f"a request to {url} from {at}" for url, at in self.requests]
        problems += [f"a dialog {text!r} on {at}" for text, at in self.dialogs]
        problems += [f"a popup {url} from {at}" for url, at in self.popups]
        assert not problems, "Hostile input ran:\n" + "\n".join(problems)


def _page_of(request: Any) -> Any:
    try:
        return request.frame.page
    except Exception:  # a service worker's request has no frame
        return None


def _shows_payloads(page: Any, where: str) -> None:
    """The page holds payloads (as text, escaped): the test did reach it with some."""
    shown = page.evaluate("() => document.body.innerHTML.includes('__xss')")
    assert shown, f"no payload on {where}"


def _shown(id_: str) -> str:
    payload = BY_ID.get(id_)
    return repr(payload.text) if payload else "(a control)"


@dataclass
class Site:
    """The stack, its staff account (an API client and a saved login) and what was seeded."""

    stack: OracleStack
    client: httpx.Client
    login: dict[str, Any]
    corpus_document: int
    html_document: int
    text_document: int  # the Markdown corpus uploaded as plain text
    stuck_conversation: str
    stuck_run: str
    titled: list[str]  # the conversations titled with TITLE_GROUPS, in their order

    def url(self, path: str, **query: str) -> str:
        return f"{self.stack.url}{path}" + (f"?{urlencode(query)}" if query else "")


# Titles, notes and searches hold 200 characters: the payloads in groups that fit, those
# meant to break out of an attribute or a <title> first (their pages are opened one by one).
TITLE_GROUPS = packed(sorted(PAYLOADS, key=lambda p: p.kind not in ("breaker", "polyglot")), 200)
TITLE_PAGES = 9  # the groups whose conversations' pages are opened: every breaker's
# Written through the services straight into the database (as the dashboard's test seeds
# its runs): a title reaches the sidebar only with a message, and a message sent through
# the API starts a run; and a token or an invite each through its form is a page a time.
SEED = """
import json
from accounts.models import Invite
from chat.models import Message, Role
from accounts.services import api_token_create
from chat.services import conversation_create
from django.contrib.auth.models import User
user = User.objects.create_user({name!r}, password={password!r}, is_staff=True, is_superuser=True)
titles, contents, names = json.loads({titles!r}), json.loads({contents!r}), json.loads({names!r})
for title, content in zip(titles, contents):
    conversation = conversation_create(owner=user, title=title)
    conversation.last_message_seq = 1
    conversation.save()
    Message.objects.create(conversation=conversation, seq=1, role=Role.USER, content=content)
    Invite.objects.create(note=title, created_by=user)
for name in names:
    api_token_create(user=user, name=name)
print(api_token_create(user=user, name="")[1])
"""


def _corpus_markdown() -> str:
    """A document whose headings (its passages' locations) and text are the payloads."""
    sections = [f"## {payload.one_line()}\n\n{payload.text}" for payload in PAYLOADS]
    return f"# {one_line(TITLE_GROUPS[0])}\n\n" + "\n\n".join(sections) + "\n"


def _corpus_html() -> str:
    """The payloads as raw HTML in a page: its text is what the Oracle keeps."""
    body = "".join(f"<h2>{p.text}</h2><p>{p.text}</p>" for p in PAYLOADS)
    return (
        f"<html><head><title>{one_line(TITLE_GROUPS[1])}</title></head><body>{body}</body></html>"
    )


def _upload(client: httpx.Client, name: str, text: str, kind: str) -> int:
    answer = client.post("/api/documents/", files={"file": (name, text.encode(), kind)})
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


def _finished(client: httpx.Client, run_id: str) -> dict[str, Any]:
    def run() -> dict[str, Any] | None:
        found = client.get(f"/api/runs/{run_id}/").json()
        return found if found["status"] == "finished" else None

    return processes.wait_for(run, timeout=60)


def _stuck_name() -> str:
    """Every payload in one tool name, those that end a <script> first (the dashboard's
    chart labels are JSON inside a <script>, cut to 48 characters)."""
    first = sorted(PAYLOADS, key=lambda payload: "</script>" not in payload.text.lower())
    return one_line(first)


@pytest.fixture(scope="module")
def site(stack: OracleStack, fake_provider: FakeServer, browser: Any) -> Iterator[Site]:
    """The staff account with the seeded rows and documents, limits that let a run make
    a hundred tool calls, and a run the dashboard counts as stuck on a payload."""
    code = SEED.format(
        name=STAFF,
        password=PASSWORD,
        titles=json.dumps([one_line(group) for group in TITLE_GROUPS]),
        contents=json.dumps([f"zq {joined(group)}" for group in TITLE_GROUPS]),
        names=json.dumps([payload.text for payload in PAYLOADS]),
    )
    seeded = processes.shell(code, env=stack.env)
    assert seeded.returncode == 0, seeded.stderr
    client = stack.client(seeded.stdout.strip().splitlines()[-1])
    limits = {
        "max_iterations": 50,
        "max_tool_calls_per_turn": 100,
        "max_consecutive_tool_errors": 10,
        "token_budget": 200_000,
        "no_progress_repeats": 2,
    }
    assert client.patch("/api/settings/", json=limits).status_code == 200
    corpus = _upload(client, "corpus.md", _corpus_markdown(), "text/markdown")
    html = _upload(client, "corpus.html", _corpus_html(), "text/html")
    text = _upload(client, "corpus.txt", _corpus_markdown(), "text/plain")

    # A run stopped for no progress, stuck on a tool named after every payload: the
    # dashboard shows that name as the pattern.
    stuck = client.post("/api/conversations/", json={}).json()["id"]  # titled by its message
    call = {"name": _stuck_name(), "arguments": {"input": PAYLOADS[0].text}}
    fake_provider.set_script(
        [{"text": joined(PAYLOADS), "tool_calls": [call]}, {"tool_calls": [call]}]
    )
    posted = client.post(
        f"/api/conversations/{stuck}/messages/", json={"content": joined(PAYLOADS)}
    )
    assert posted.status_code == 202, posted.text
    run = _finished(client, posted.json()["run_id"])
    assert run["reason"] == "no_progress", run

    listed = client.get("/api/conversations/").json()["conversations"]
    by_title = {item["title"]: item["id"] for item in listed}
    titled = [by_title[one_line(group)] for group in TITLE_GROUPS]

    context = browser.new_context()
    log_in(context.new_page(), stack.url, STAFF)
    login = context.storage_state()
    context.close()
    yield Site(stack, client, login, corpus, html, text, stuck, run["id"], titled)
    client.close()


def _watched(browser: Any, site: Site, *, logged_in: bool = True) -> tuple[Any, Detector]:
    detector = Detector()
    context = browser.new_context(
        viewport={"width": 1280, "height": 900},
        bypass_csp=True,
        storage_state=site.login if logged_in else None,
    )
    context.set_default_timeout(15_000)
    detector.attach(context)
    return context, detector


@pytest.fixture
def watched(browser: Any, site: Site) -> Iterator[tuple[Any, Detector]]:
    """A tab logged in as the staff account, with the detector attached. Any Content
    Security Policy is bypassed: what is tested is the escaping, not a policy over it."""
    context, detector = _watched(browser, site)
    yield context.new_page(), detector
    context.close()
    detector.assert_nothing_ran()  # what ran before the test failed otherwise, if it did


# --- the detector -------------------------------------------------------------------------

CONTROLS = {  # a payload of each kind the detector must catch, found by a piece of it
    "an error handler": payload_with('<img src="x" onerror='),
    "an htmx request": payload_with('hx-trigger="load">htmx'),
    "an element that loads": payload_with("<input type=image"),
    "a javascript: link, clicked": payload_with('href="JaVaScRiPt:'),
    "a mouseover handler": payload_with("<div onmouseover"),
    "a data: frame posting to the top": payload_with('<iframe src="data:'),
}
# htmx, as base.html sets it up, runs no <script> it swaps in and no hx-on (no eval):
# these do not run even with the Content-Security-Policy bypassed.
HTMX_NEVER_RUNS = {
    "a script that htmx swaps in": payload_with("<script>top"),
    "htmx hx-on": payload_with("hx-on:mouseover"),
}
LIVE_AT_LEAST = 125  # of the corpus, run where nothing escapes them (135 in Chromium 156)


def test_the_detector_catches_payloads_that_run(watched: tuple[Any, Detector], site: Site) -> None:
    """The controls: no later test passes because the detector is blind."""
    page, detector = watched
    page.goto(site.url("/documents/"))
    # As if the page swapped in unescaped HTML, the way it swaps streamed fragments in:
    # one payload of each kind the detector must catch, and every htmx payload.
    swapped = [*CONTROLS.values(), *HTMX_NEVER_RUNS.values()]
    swapped += [p for p in PAYLOADS if p.kind == "htmx"]
    html = "".join(f"<div>{payload.text}</div>" for payload in swapped)
    html += "<img src=x onerror=\"alert('control_dialog')\">"
    page.evaluate("html => htmx.swap('#main', html, {swapStyle: 'beforeend'})", html)
    detector.exercise(page)
    expected = {payload.id for payload in CONTROLS.values()} | {"control_dialog"}
    detector.wait_until(page, lambda ids: expected <= ids)
    caught = detector.ids()
    missed = {name: payload.id for name, payload in CONTROLS.items() if payload.id not in caught}
    assert not missed, f"the detector missed {missed}"
    assert "control_dialog" in caught
    ran = {name: p.id for name, p in HTMX_NEVER_RUNS.items() if p.id in detector.ids()}
    assert not ran, f"htmx ran {ran}"

    # The rest, each in a page of its own (Markdown rendered with raw HTML and any link
    # allowed). What they load fails at once, not by way of a 404 page of the server.
    page.route(re.compile(r"/(x|xss-x\d{3})(/.*)?$"), lambda route: route.abort())
    unsafe = MarkdownIt("commonmark", {"html": True})
    unsafe.validateLink = lambda url: True
    frames = "".join(
        "<iframe sandbox='allow-scripts allow-same-origin allow-forms' srcdoc=\""
        + _attribute(unsafe.render(p.text) if p.kind == "markdown" else p.text)
        + '"></iframe>'
        for p in PAYLOADS
        if p.kind != "htmx"
    )
    page.set_content(f"<!doctype html><body>{frames}</body>")
    detector.exercise(page)
    detector.wait_until(page, lambda ids: len((ids | caught) & set(BY_ID)) >= LIVE_AT_LEAST)
    live = detector.ids() | caught
    assert len(live & set(BY_ID)) >= LIVE_AT_LEAST, sorted(set(BY_ID) - live)
    detector.forget()  # all of that ran on purpose


def _attribute(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")


# --- the conversation ---------------------------------------------------------------------


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _named_calls(payloads: list[Payload]) -> list[dict[str, Any]]:
    """A call of a tool named after each payload, with the payload as its arguments (as
    JSON, or as text that is not JSON, shown as it came) and in its id."""
    return [
        {**_call(p.text, {"input": p.text} if n % 2 else p.text), "id": f"c{n}{p.one_line()}"}
        for n, p in enumerate(payloads)
    ]


def _streamed(payloads: list[Payload]) -> list[str]:
    """The payloads as an answer streams them: each cut in three, a block each."""
    chunks = []
    for payload in payloads:
        text = payload.text + "\n\n"
        third = max(1, len(text) // 3)
        chunks += [text[:third], text[third : 2 * third], text[2 * third :]]
    return [*chunks, END]


def _run(
    names: list[Payload],
    helper_names: list[Payload],
    task: list[Payload],
    document: int,
    answer: list[Payload],
    delay: float = 0,
) -> list[dict[str, Any]]:
    """One run's model responses: a tool call named after each of `names` and a helper
    given `task` (its steps: calls named after `helper_names`, then reading the corpus
    document; its answer: the corpus), then `answer` streamed."""
    helper = _call("delegate", {"agent_type": "researcher", "task": joined(task)})
    reads = [
        _call("read_document", {"document_id": document, "start": start, "length": 8000})
        for start in range(0, 4 * 8000, 8000)
    ]
    return [
        {"delay": delay, "tool_calls": [*_named_calls(names), helper]},
        {"tool_calls": [*_named_calls(helper_names), *reads]},
        {"text": joined(PAYLOADS)},
        {"text": _streamed(answer), "chunk_delay": 0.002},
    ]


NAMES_PER_RUN = 90  # tool calls named after payloads in one run (its budget: 100 calls)


def test_a_conversation_keeps_every_payload_inert(
    watched: tuple[Any, Detector], site: Site, fake_provider: FakeServer, tmp_path: Path
) -> None:
    """The user's messages, the streamed and the saved answers, tool names, ids, arguments
    and results, a helper's task, steps and answer, a System message naming a stuck call;
    the sidebar's titles and search; renaming; titles and searches on conversation pages."""
    page, detector = watched
    # Every payload names a tool once: in the first run, its helper, the second, its helper.
    extra = (len(PAYLOADS) - 2 * NAMES_PER_RUN) // 2
    cuts = [0, NAMES_PER_RUN, NAMES_PER_RUN + extra, 2 * NAMES_PER_RUN + extra, len(PAYLOADS)]
    names = [list(PAYLOADS[start:end]) for start, end in pairwise(cuts)]
    tasks = packed(PAYLOADS, 3900)  # a helper's task is at most 4,000 characters
    document = site.corpus_document
    fake_provider.set_script(
        # The first run waits a moment: the page that sent the message opens meanwhile.
        # It streams the corpus; the second only ends its answer.
        _run(names[0], names[1], tasks[0], document, list(PAYLOADS), delay=0.5)
        + _run(names[2], names[3], tasks[1], document, [])
    )
    page.goto(site.url("/"))
    page.fill("#composer-input", joined(PAYLOADS))
    page.press("#composer-input", "Enter")
    answers = page.locator(".msg-assistant", has_text=END)
    expect(answers).to_have_count(1, timeout=60_000)
    expect(page.locator("#gauges")).to_have_attribute("data-status", "finished")
    detector.check(page, "a conversation as its first run streamed")

    page.fill("#composer-input", joined(reversed(PAYLOADS)))
    page.press("#composer-input", "Enter")
    expect(answers).to_have_count(2, timeout=60_000)
    expect(page.locator("#gauges")).to_have_attribute("data-status", "finished")
    detector.check(page, "a conversation as its second run streamed")
    expect(page.locator(".tool-step")).to_have_count(2 * (NAMES_PER_RUN + 1))

    page.reload()
    expect(answers).to_have_count(2)
    detector.check(page, "a conversation reloaded")
    for folder, look in each_look(page, tmp_path):
        page.locator(".delegate-step").first.scroll_into_view_if_needed()
        page.screenshot(path=str(folder / f"xss-corpus-{look}.png"))
    page.locator(".msg-user .edit-message").last.click()
    expect(page.locator(".edit-form textarea")).to_have_value(joined(reversed(PAYLOADS)))
    detector.check(page, "a message being edited")

    search = page.locator("#sidebar-search-input")
    search.fill("zq")  # in every seeded message, in no title: each quoted
    expect(page.locator("#sidebar-list .snippet")).to_have_count(len(TITLE_GROUPS))
    detector.check(page, "the sidebar searched")
    search.fill(f"zz-none {one_line(TITLE_GROUPS[0])}")  # finds nothing, and says what
    expect(page.locator(".sidebar-empty")).to_be_visible()
    detector.check(page, "the sidebar searched in vain")
    search.fill("")
    expect(page.locator("#sidebar-list li")).to_have_count(len(TITLE_GROUPS) + 2)

    page.locator("#sidebar-list li.current .item-menu-button").click()
    page.locator("#item-menu [data-action=rename]").click()
    title = page.locator("#sidebar-list li input[name=title]")
    title.evaluate("input => input.removeAttribute('maxlength')")  # as a hand-made request
    title.fill(one_line(PAYLOADS))  # too long: refused, and kept in the field to correct
    title.press("Enter")
    expect(page.locator(".rename-error")).to_be_visible()
    detector.check(page, "a rename refused")
    title.fill(one_line(TITLE_GROUPS[3]))
    title.press("Enter")
    expect(page.locator("#title")).to_have_value(one_line(TITLE_GROUPS[3]))
    detector.check(page, "a rename")

    # Each conversation's page, with its title and a search for its title that finds
    # nothing (the search box and the sidebar say what was searched for).
    pages = {
        f"the conversation titled with group {n}": site.url(
            f"/c/{conversation}/", q=f"zz-none {one_line(group)}"
        )
        for n, (conversation, group) in enumerate(zip(site.titled, TITLE_GROUPS, strict=True))
        if n < TITLE_PAGES
    }
    pages["the conversation stuck on a payload"] = site.url(f"/c/{site.stuck_conversation}/")
    detector.check_pages(page.context, pages)


# --- documents ----------------------------------------------------------------------------

# The Documents page's form as it posts without JavaScript: every file in one request,
# answered by a redirect to the page, which then says what was added.
UPLOAD_WITHOUT_SCRIPT = """async (files) => {
  const data = new FormData();
  const token = document.querySelector("#upload-form [name=csrfmiddlewaretoken]").value;
  data.append("csrfmiddlewaretoken", token);
  for (const [name, text] of files) {
    data.append("file", new File([text], name, { type: "text/markdown" }));
  }
  const answer = await fetch(location.pathname, { method: "POST", body: data, redirect: "manual" });
  return answer.type;
}"""


DROP = """(names) => {
  const files = new DataTransfer();
  for (const name of names) files.items.add(new File(["PK"], name));
  return files;
}"""


def test_documents_keep_every_payload_inert(watched: tuple[Any, Detector], site: Site) -> None:
    """Titles (of Markdown and of HTML), file names, text and headings of documents: the
    list, what the upload says, each document's page (Markdown rendered, HTML's and plain
    text's kept as text) and the list alone (htmx's part)."""
    page, detector = watched
    page.goto(site.url("/documents/"))
    files = [
        [f"{one_line(group)}.md", f"# {one_line(group)}\n\n{joined(group)}\n"]
        for group in TITLE_GROUPS
    ]
    for start in range(0, len(files), 50):  # Django takes at most 100 files a request
        assert page.evaluate(UPLOAD_WITHOUT_SCRIPT, files[start : start + 50]) == "opaqueredirect"
    page.goto(site.url("/documents/"))
    expect(page.locator(".flash li")).to_have_count(len(files))  # "Added <title> (…)."
    detector.check(page, "the documents, just uploaded")

    # Through the page's own uploads (its JavaScript): files named after payloads, each
    # refused by name (Oracle does not read slides).
    refused = [p for group in TITLE_GROUPS[:TITLE_PAGES] for p in group]
    dropped = page.evaluate_handle(DROP, [f"{p.one_line()}.pptx" for p in refused])
    page.dispatch_event("#upload-form", "drop", {"dataTransfer": dropped})
    expect(page.locator(".upload.failed")).to_have_count(len(refused))
    detector.check(page, "uploads refused by name")

    # A heading's title, as Markdown's marks around it left it.
    links = dict(
        page.eval_on_selector_all(
            ".document-title a", "all => all.map(a => [a.textContent, a.href])"
        )
    )
    pages = {
        f"the document titled with group {n}": links[" ".join(one_line(group).strip("*_`").split())]
        for n, group in enumerate(TITLE_GROUPS[:TITLE_PAGES])
    }
    pages["the corpus document, its Markdown rendered"] = site.url(
        f"/documents/{site.corpus_document}/"
    )
    pages["the corpus as HTML"] = site.url(f"/documents/{site.html_document}/")
    pages["the corpus as plain text"] = site.url(f"/documents/{site.text_document}/")
    pages.update(_cited_corpus_pages(site))
    pages["the list alone"] = site.url("/documents/list/")
    detector.check_pages(page.context, pages)


# Where a citation's highlight begins inside the corpus: just before what would make a
# payload live if a mark broke it open (its mark goes into the text right there).
CITED_AT = ["<script", "javascript:", "onerror=", '"><', "](", "<svg", "hx-", "{{"]


def _cited_corpus_pages(site: Site) -> dict[str, str]:
    """The corpus documents highlighted whole (every payload inside the marks), and the
    Markdown corpus highlighted from inside payloads: a citation's page, as it opens."""
    corpus = _corpus_markdown()
    whole = {"start": "0", "length": str(len(corpus))}
    pages = {
        f"the corpus {kind}, highlighted whole": site.url(f"/documents/{pk}/", **whole)
        for kind, pk in [
            ("rendered", site.corpus_document),
            ("as plain text", site.text_document),
            ("as HTML", site.html_document),
        ]
    }
    for piece in CITED_AT:
        start = corpus.index(piece)
        where = {"start": str(start), "length": "400"}
        pages[f"the corpus highlighted from {piece!r}"] = site.url(
            f"/documents/{site.corpus_document}/", **where
        )
    return pages


# --- settings and API tokens --------------------------------------------------------------

# The settings form as it posts without JavaScript, with any text in any field.
POST_FORM = """({action, fields}) => {
  const form = document.createElement("form");
  form.method = "post";
  form.action = action;
  const token = document.querySelector("[name=csrfmiddlewaretoken]").value;
  for (const [name, value] of [["csrfmiddlewaretoken", token], ...Object.entries(fields)]) {
    const input = document.createElement("textarea");
    input.name = name;
    input.value = value;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
}"""


def test_settings_and_tokens_keep_every_payload_inert(
    watched: tuple[Any, Detector], site: Site
) -> None:
    """The settings sent with payloads for values (refused, and shown again to correct),
    and API tokens named after every payload."""
    page, detector = watched
    page.goto(site.url("/settings/"))
    expect(page.locator(".token-list .token")).to_have_count(len(PAYLOADS) + 1)
    detector.check(page, "the settings, with a token named after each payload")

    names = [spec.name for spec in FIELDS]
    fields = {name: joined(PAYLOADS[n :: len(names)], " ") for n, name in enumerate(names)}
    with page.expect_navigation():
        page.evaluate(POST_FORM, {"action": "/settings/", "fields": fields})
    expect(page.locator(".setting .error").first).to_be_visible()
    detector.check(page, "the settings refused, their fields sharing the payloads")

    page.fill("#token-name", payload_with('"><script>').text)  # through the form
    page.get_by_role("button", name="Create token").click()
    expect(page.locator("#new-token")).to_be_visible()
    detector.check(page, "a token just made")


# --- staff pages and pages for everyone ---------------------------------------------------


def test_staff_pages_keep_every_payload_inert(
    watched: tuple[Any, Detector], site: Site, browser: Any
) -> None:
    """The admin's lists and pages of conversations, messages, runs, tokens, documents
    and invites; the dashboard, its runs stuck on a payload and its refusals of filters
    that are payloads; and, logged out, the log-in and sign-up pages' echoes."""
    page, detector = watched
    long_groups = packed(PAYLOADS, 5000)  # what an address carries (encoded: 7,500)
    filters = ["period", "agent", "skill", "reason", "action", "event", "user", "hour", "day"]
    pages = {
        # The staff account's (the stack serves the whole suite's).
        "the admin's conversations": f"/admin/chat/conversation/?q={STAFF}",
        "the admin's conversations searched": "/admin/chat/conversation/?"
        + urlencode({"q": one_line(TITLE_GROUPS[0])}),
        "a conversation with its messages in the admin": (
            f"/admin/chat/conversation/{site.stuck_conversation}/change/"
        ),
        "the admin's stuck runs": "/admin/chat/run/?reason__exact=no_progress",
        "a run's state in the admin": f"/admin/chat/run/{site.stuck_run}/change/",
        # The newest first: the staff account's, seeded last.
        **{f"the admin's API tokens, page {n}": f"/admin/accounts/apitoken/?p={n}" for n in (1, 2)},
        "the admin's documents": f"/admin/knowledge/document/?q={STAFF}",
        "a document's text in the admin": (
            f"/admin/knowledge/document/{site.corpus_document}/change/"
        ),
        "the admin's invites": "/admin/accounts/invite/?all=",
        "the dashboard": "/dashboard/?period=24h",
        "the dashboard's stuck runs": "/dashboard/runs/?period=24h&reason=no_progress",
        "the dashboard's runs stuck on some payloads": "/dashboard/runs/?"
        + urlencode({"period": "24h", "pattern": one_line(TITLE_GROUPS[1])}),
        "the dashboard refusing a period": "/dashboard/?"
        + urlencode({"period": one_line(TITLE_GROUPS[0])}),
        "the dashboard's hours refusing a period": "/dashboard/hours/?"
        + urlencode({"period": one_line(TITLE_GROUPS[2])}),
        "the dashboard's runs refusing every filter": "/dashboard/runs/?"
        + urlencode({name: one_line(TITLE_GROUPS[3 + n]) for n, name in enumerate(filters)}),
        **{
            f"the dashboard's runs refusing filters named after payloads ({n})": (
                "/dashboard/runs/?" + urlencode({p.text: "1" for p in group})
            )
            for n, group in enumerate(long_groups)
        },
    }
    detector.check_pages(page.context, {where: site.url(path) for where, path in pages.items()})

    context, stranger = _watched(browser, site, logged_in=False)
    try:
        visitor = context.new_page()
        # The payloads made to break out of an attribute, in `next` (Django keeps one of
        # at most 2,048 characters and no backslash, and shows it again).
        breakers = [p for p in PAYLOADS if p.kind in ("script", "breaker", "template", "polyglot")]
        kept = [payload for payload in breakers if "\\" not in payload.text]
        going_on = {
            f"the log-in page, asked to go on to payloads ({n})": site.url(
                "/login/", next=f"/{one_line(group)}"
            )
            for n, group in enumerate(packed(kept, 2000))
        }
        stranger.check_pages(context, going_on)
        visitor.goto(site.url("/login/"))
        visitor.fill("input[name=username]", payload_with('"><img').text)
        visitor.fill("input[name=password]", "wrong")
        visitor.click("button[type=submit]")
        expect(visitor.locator(".errorlist")).to_be_visible()
        stranger.check(visitor, "a log-in refused")
        visitor.goto(site.url("/signup/"))
        visitor.fill("input[name=username]", payload_with("'><img").text)
        visitor.fill("input[name=password1]", "x")
        visitor.fill("input[name=password2]", "y")
        visitor.click("button[type=submit]")
        expect(visitor.locator(".errorlist").first).to_be_visible()
        stranger.check(visitor, "a sign-up refused")
    finally:
        context.close()
