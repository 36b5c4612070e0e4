"""Export a conversation as Markdown or JSON: everything said, and what each run used."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat import services
from chat.models import Conversation, Message, Role, Run, RunStatus
from chat.services import conversation_create

pytestmark = pytest.mark.django_db


def lisbon(owner: User) -> Conversation:
    """A conversation with one run: a question, a tool step, a notice and an answer."""
    conversation = conversation_create(owner=owner, title="Trip to Lisbon")
    run = Run.objects.create(
        conversation=conversation, status=RunStatus.FINISHED, reason="max_iterations",
        iterations=3, tool_calls=1, tokens=1234, cost_usd=0.0012, elapsed_ms=4200,
        finished_at=datetime(2026, 11, 20, 12, 0, 5, tzinfo=UTC),
    )  # fmt: skip
    rows = [
        (Role.USER, "How far is Sintra from Lisbon?", {}),
        (Role.ASSISTANT, "", {"tool_calls": [{"name": "calculator"}]}),
        (Role.TOOL, "25", {"name": "calculator", "arguments": {"expression": "5*5"},
                           "ok": True, "status": "done"}),
        (Role.SYSTEM, "Reached the iteration limit (3 of 3).", {"severity": "warning"}),
        (Role.ASSISTANT, "About **25 km**.\n\n```\nkm = 25\n```", {"final": True}),
    ]  # fmt: skip
    for seq, (role, content, metadata) in enumerate(rows, start=1):
        Message.objects.create(conversation=conversation, run=run, seq=seq, role=role,
                               content=content, metadata=metadata)  # fmt: skip
    return conversation


def test_markdown_has_the_title_the_messages_in_order_and_the_runs_usage(
    client: Client, alice: User
) -> None:
    conversation = lisbon(alice)
    client.force_login(alice)

    response = client.get(f"/c/{conversation.id}/export.md")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="trip-to-lisbon.md"'
    text = response.content.decode()
    assert text.startswith("# Trip to Lisbon\n")
    order = [
        "## You\n\nHow far is Sintra from Lisbon?",
        "<details>\n<summary>Tool: calculator</summary>",
        '"expression": "5*5"',
        "Result:\n\n```\n25\n```",
        "> **System:** Reached the iteration limit (3 of 3).",
        "## Oracle\n\nAbout **25 km**.\n\n```\nkm = 25\n```",
        "**Run:** Iteration limit (max_iterations) · 3 iterations · 1 tool call · "
        "1,234 tokens · $0.0012 · 4.2 s",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)
    assert "## Oracle\n\n\n" not in text  # the step that only called tools has no empty answer


def test_a_code_fence_in_a_tool_result_does_not_break_out_of_its_block(
    client: Client, alice: User
) -> None:
    conversation = lisbon(alice)
    Message.objects.filter(conversation=conversation, role=Role.TOOL).update(
        content="```\nnot the end\n```"
    )
    client.force_login(alice)

    text = client.get(f"/c/{conversation.id}/export.md").content.decode()

    assert "````\n```\nnot the end\n```\n````" in text


def test_json_has_the_conversation_its_messages_and_its_runs(client: Client, alice: User) -> None:
    conversation = lisbon(alice)
    client.force_login(alice)

    response = client.get(f"/c/{conversation.id}/export.json")

    assert response["Content-Disposition"] == 'attachment; filename="trip-to-lisbon.json"'
    body = json.loads(response.content)
    assert body["conversation"]["title"] == "Trip to Lisbon"
    assert [m["role"] for m in body["messages"]] == [
        "user", "assistant", "tool", "system", "assistant"
    ]  # fmt: skip
    assert body["messages"][2]["metadata"]["arguments"] == {"expression": "5*5"}
    (run,) = body["runs"]
    assert run["reason"] == "max_iterations"
    assert (run["iterations"], run["tool_calls"], run["tokens"]) == (3, 1, 1234)
    assert (run["cost_usd"], run["elapsed_ms"]) == (0.0012, 4200)
    assert run["finished_at"] == "2026-11-20T12:00:05+00:00"
    assert run["created_at"]


def test_an_untitled_conversation_gets_a_plain_file_name(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    client.force_login(alice)

    response = client.get(f"/c/{conversation.id}/export.md")

    assert response["Content-Disposition"] == 'attachment; filename="conversation.md"'
    assert response.content.decode().startswith("# New conversation\n")


@pytest.mark.parametrize("suffix", ["md", "json"])
def test_only_the_owner_can_export(client: Client, alice: User, bob: User, suffix: str) -> None:
    conversation = lisbon(bob)
    client.force_login(alice)

    assert client.get(f"/c/{conversation.id}/export.{suffix}").status_code == 404


@pytest.mark.parametrize("suffix", ["md", "json"])
def test_a_deleted_conversation_is_not_exported(client: Client, alice: User, suffix: str) -> None:
    conversation = lisbon(alice)
    services.conversation_delete(conversation=conversation)
    client.force_login(alice)

    assert client.get(f"/c/{conversation.id}/export.{suffix}").status_code == 404
