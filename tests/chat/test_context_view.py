"""The context window as a person sees it: a Context gauge beside the others (this call's
prompt against the model's window, none when no window is known), and the System message
of a request shortened to fit it, whose summary opens like a tool step; live, and after
a reload (the page drawn from rows, the gauge from the run's saved events)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from chat.models import Message, Role, Run, RunEvent, RunStatus
from chat.run_view import RunView
from chat.services import conversation_create
from oracle.asgi import application

SUMMARY = (
    "The user sent **two long notes** about owls.\n\n- rivers\n- lanterns\n\n"
    "<script>alert(1)</script>"
)
TEXT = (
    "Earlier messages were summarised to fit the model's 3,000-token context "
    "(4,451 → 1,784 tokens). The conversation itself is kept whole."
)
SHOWN_TEXT = escape(TEXT)  # as the page writes it
COMPACTED = {
    "type": "context.compacted", "model": "openai/fake-model", "window": 3000, "before": 4451,
    "after": 1784, "summarised": True, "stubbed": 0, "cut": 0, "summary": SUMMARY, "covers": 2,
    "text": TEXT,
}  # fmt: skip
REFUSED = {"type": "context.refused", "model": "openai/fake-model", "window": 3000,
           "requested": 4451, "ratio": 1.1, "status": 400}  # fmt: skip
SAME_ORIGIN = [(b"origin", b"http://localhost"), (b"host", b"localhost")]


def run_events() -> list[dict[str, Any]]:
    """A run whose second call was refused as too long, then summarised and answered."""
    events: list[dict[str, Any]] = [
        {"type": "run.started", "config": {"token_budget": 50000, "token_warning_percent": 60}},
        {"type": "context.used", "prompt_tokens": 1200, "window": 3000},
        {"type": "assistant.message", "text": "Noted.", "final": False, "tool_calls": []},
        REFUSED,
        COMPACTED,
        {"type": "context.used", "prompt_tokens": 1784, "window": 3000},
        {"type": "assistant.message", "text": "Noted again.", "final": True, "tool_calls": []},
        {"type": "run.finished", "reason": "completed", "iterations": 2, "tokens": 4000},
    ]
    return [{**event, "seq": seq} for seq, event in enumerate(events, start=1)]


def context_gauge(html: str) -> str:
    found = re.search(r'<div class="gauge" id="gauge-context".*?</div>', html, re.S)
    assert found, "no context gauge"
    return found.group(0)


def summary_details(html: str) -> str:
    found = re.search(r'<details class="context-summary">.*?</details>', html, re.S)
    assert found, "no summary to open"
    return found.group(0)


def test_the_context_gauge_shows_this_calls_prompt_against_the_window_and_moves() -> None:
    view = RunView("r1")
    events = run_events()
    view.render(events[0])
    assert "gauge-context" not in view.gauges_if_changed()  # no call measured yet

    view.render(events[1])
    first = context_gauge(view.gauges_if_changed())
    assert "Context" in first and "1,200 / 3,000" in first
    assert 'value="40"' in first  # of 100
    assert 'low="60"' in first  # the warning colour from the user's token warning percent
    for event in events[2:6]:
        view.render(event)
    moved = view.gauges_if_changed()

    gauge = context_gauge(moved)
    assert "1,784 / 3,000" in gauge and 'value="59"' in gauge
    assert 'hx-swap-oob="true"' in gauge  # the gauge alone replaces its old self
    assert 'id="gauge-tokens"' not in moved  # the others did not move


def test_a_run_with_no_window_known_has_no_context_gauge() -> None:
    view = RunView("r1")
    view.render({"type": "run.started", "seq": 1, "config": {}})
    view.render({"type": "assistant.message", "seq": 2, "text": "4", "final": True})
    view.render({"type": "run.finished", "seq": 3, "reason": "completed", "iterations": 1})

    gauges = view.gauges_if_changed(always=True)

    assert 'id="gauge-iterations"' in gauges and "gauge-context" not in gauges


def test_a_compaction_shows_live_as_a_system_message_with_its_summary_to_open() -> None:
    view = RunView("r1")
    html = "".join(view.render(event) for event in run_events()[:5])

    assert 'class="msg msg-system severity-info"' in html
    assert "context: 1,784 of 3,000 tokens" in html
    assert SHOWN_TEXT in html
    details = summary_details(html)
    assert "Summary sent to the model" in details
    assert "<strong>two long notes</strong>" in details and "<li>lanterns</li>" in details
    assert "<script" not in details  # the model's words, sanitised as an answer is


def test_a_refusal_and_a_measured_call_add_nothing_to_the_conversation() -> None:
    view = RunView("r1")
    view.render({"type": "run.started", "seq": 1, "config": {}})

    assert view.render({**REFUSED, "seq": 2}) == ""
    assert view.render({"type": "context.used", "seq": 3, "prompt_tokens": 9, "window": 99}) == ""


def test_a_compaction_without_a_summary_has_nothing_to_open() -> None:
    view = RunView("r1")
    view.render({"type": "run.started", "seq": 1, "config": {}})
    shortened = {**COMPACTED, "seq": 2, "summarised": False, "summary": "", "stubbed": 3}

    html = view.render(shortened)

    assert "context: 1,784 of 3,000 tokens" in html and "context-summary" not in html


@sync_to_async
def saved_run(user: User) -> tuple[str, str, str]:
    """A finished run as the worker leaves it: its rows (the recorder's System message of
    the compaction among them), its events and its state; and a logged-in cookie."""
    conversation = conversation_create(owner=user, title="Long notes")
    question = Message.objects.create(
        conversation=conversation, seq=1, role=Role.USER, content="A long note."
    )
    events = run_events()
    state = {"context": {"prompt_tokens": 1784, "window_tokens": 3000}}
    run = Run.objects.create(
        conversation=conversation, status=RunStatus.FINISHED, reason="completed",
        user_message=question, last_event_seq=len(events), state=state,
    )  # fmt: skip
    context = {key: COMPACTED[key] for key in ("model", "window", "before", "after", "summarised",
                                               "stubbed", "cut", "summary", "covers")}  # fmt: skip
    metadata = {"severity": "info", "metric": "context", "value": 1784, "limit": 3000,
                "context": context}  # fmt: skip
    rows = [(Role.ASSISTANT, "Noted.", {}), (Role.SYSTEM, TEXT, metadata),
            (Role.ASSISTANT, "Noted again.", {"final": True})]  # fmt: skip
    for seq, (role, content, meta) in enumerate(rows, start=2):
        Message.objects.create(
            conversation=conversation, run=run, seq=seq, role=role, content=content, metadata=meta
        )
    RunEvent.objects.bulk_create(
        RunEvent(run=run, seq=event["seq"], type=event["type"], data=event) for event in events
    )
    client = Client()
    client.force_login(user)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    return str(conversation.pk), str(run.pk), cookie


@pytest.mark.django_db(transaction=True)
async def test_after_a_reload_the_summary_and_the_context_gauge_are_there(alice: User) -> None:
    conversation_id, run_id, cookie = await saved_run(alice)
    client = Client()
    await sync_to_async(client.force_login)(alice)

    page = (await sync_to_async(client.get)(f"/c/{conversation_id}/")).content.decode()

    assert "context: 1,784 of 3,000 tokens" in page and SHOWN_TEXT in page
    details = summary_details(page)
    assert "<strong>two long notes</strong>" in details and "<script" not in details
    # The page's socket draws the gauges: the run's saved events, replayed.
    socket = WebsocketCommunicator(
        application, f"/ws/conversations/{conversation_id}/",
        headers=[*SAME_ORIGIN, (b"cookie", cookie.encode())],
    )  # fmt: skip
    connected, _ = await socket.connect()
    assert connected
    await socket.send_json_to({"type": "sync", "run_id": run_id, "last_seq": 8})
    frames = await socket.receive_from(10)
    await socket.disconnect()

    gauge = context_gauge(frames)
    assert "1,784 / 3,000" in gauge and 'low="60"' in gauge
    assert "context-summary" not in frames  # on the page already, not sent again
