"""Whatever the model or the user writes is shown, never run."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.models import Message, Role, Run, RunStatus
from chat.run_view import RunView
from chat.services import conversation_create
from markup.markdown import render_markdown

PAYLOADS = [
    "<script>alert('x')</script>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    '<img src=x onerror="alert(1)">',
    '<a href="#" onclick="alert(1)">a</a>',
    '<div hx-get="/logout/" hx-trigger="load">x</div>',
    '<button hx-post="/api/runs/x/cancel/">x</button>',
    "![x](javascript:alert(1))",
    '<svg onload="alert(1)"></svg>',
    "```html\n<script>alert(1)</script>\n```",
    '<iframe src="javascript:alert(1)"></iframe>',
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
]

FORBIDDEN_TAGS = {"script", "iframe", "svg", "img", "object", "embed", "style", "form", "input"}


class Elements(HTMLParser):
    """Every element and attribute a browser would build from the HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def assert_inert(html: str, *, our_htmx: tuple[str, ...] = ()) -> None:
    """No script-capable element, no event handler, no script URL, and no htmx
    attribute other than the ones Oracle itself puts there (`our_htmx`)."""
    parser = Elements()
    parser.feed(html)
    for tag, attributes in parser.found:
        assert tag not in FORBIDDEN_TAGS, f"<{tag}> in {html!r}"
        for name, value in attributes:
            assert not name.startswith("on"), f"{name}= on <{tag}>"
            if name.startswith(("hx-", "data-hx-")):
                assert (name, value) in our_htmx or name == "hx-swap-oob", f"{name}={value!r}"
            if name in ("href", "src", "action", "formaction"):
                url = (value or "").strip().lower()
                assert not url.startswith(("javascript:", "data:", "vbscript:")), f"{name}={value}"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_rendering_is_inert(payload: str) -> None:
    assert_inert(render_markdown(payload))


@pytest.mark.parametrize("payload", PAYLOADS)
def test_streamed_fragments_are_inert(payload: str) -> None:
    view = RunView("r1")
    events = [
        {"type": "run.started", "seq": 1, "config": {}},
        {"type": "assistant.delta", "seq": 2, "text": payload},
        {"type": "assistant.delta", "seq": 3, "text": payload},
        {"type": "tool.call", "seq": 4, "id": "c1", "name": payload, "arguments": {"x": payload}},
        {"type": "tool.result", "seq": 5, "id": "c1", "name": payload, "ok": True,
         "content": payload},
        {"type": "system.notice", "seq": 6, "severity": payload, "text": payload, "metric": payload,
         "value": 1, "limit": 2},
        {"type": "assistant.message", "seq": 7, "text": payload, "final": True, "tool_calls": []},
    ]  # fmt: skip
    html = "".join(view.render(event) for event in events)

    assert_inert(html, our_htmx=(("hx-post", "/api/runs/r1/cancel/"), ("hx-swap", "none")))


@pytest.mark.django_db
@pytest.mark.parametrize("payload", PAYLOADS)
def test_saved_messages_are_inert_on_the_page(client: Client, alice: User, payload: str) -> None:
    conversation = conversation_create(owner=alice, title=payload)
    user = Message.objects.create(conversation=conversation, seq=1, role=Role.USER, content=payload)
    run = Run.objects.create(conversation=conversation, status=RunStatus.FINISHED,
                             reason="completed", user_message=user)  # fmt: skip
    for seq, role in ((2, Role.TOOL), (3, Role.ASSISTANT), (4, Role.SYSTEM)):
        Message.objects.create(conversation=conversation, run=run, seq=seq, role=role,
                               content=payload, metadata={"name": payload, "arguments": payload,
                                                          "status": "done", "ok": True,
                                                          "severity": payload})  # fmt: skip
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()
    messages = page[page.index('id="messages"') : page.index('id="stream-state"')]

    assert_inert(messages)
    titles = page[page.index('<ul class="conversation-list">') : page.index("</ul>")]
    assert_inert(titles)


def test_code_blocks_are_highlighted() -> None:
    html = render_markdown("```python\nimport os\nprint(os.sep)\n```")

    assert '<code class="language-python">' in html
    assert '<span class="kn">import</span>' in html
