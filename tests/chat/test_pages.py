"""The chat pages: history with reasons, ownership, and the composer's clear errors."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.models import Conversation, Message, Role, Run, RunStatus
from chat.services import conversation_create

pytestmark = pytest.mark.django_db


def finished_run(conversation: Conversation, reason: str, answer: str) -> Run:
    user = Message.objects.create(conversation=conversation, seq=1, role=Role.USER, content="Q?")
    run = Run.objects.create(
        conversation=conversation, status=RunStatus.FINISHED, reason=reason, user_message=user
    )
    Message.objects.create(
        conversation=conversation, run=run, seq=2, role=Role.ASSISTANT,
        content=answer, termination_reason=reason, metadata={"final": True},
    )  # fmt: skip
    Message.objects.create(conversation=conversation, run=run, seq=3, role=Role.SYSTEM,
                           content="Reached the iteration limit (15 of 15).",
                           metadata={"severity": "warning", "metric": "iterations",
                                     "value": 15, "limit": 15, "reason": reason})  # fmt: skip
    return run


def test_history_shows_the_reason_as_a_badge_and_offers_continue(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice, title="Research")
    run = finished_run(conversation, "max_iterations", "Stopped: reached the iteration limit.")
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    assert "Stopped: reached the iteration limit." in page
    assert 'class="badge badge-max_iterations"' in page
    assert "Iteration limit" in page
    assert "msg msg-system severity-warning" in page
    assert "iterations: 15 of 15" in page
    assert f'hx-post="/api/runs/{run.pk}/continue/"' in page


def test_a_completed_run_has_no_badge_and_no_continue(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    finished_run(conversation, "completed", "All done.")
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    assert "All done." in page
    assert "badge-" not in page
    assert "/continue/" not in page


@pytest.mark.parametrize(
    ("method", "suffix"),
    [("get", ""), ("post", "messages/"), ("post", "rename/"), ("post", "delete/")],
)
def test_another_users_conversation_is_404_everywhere(
    client: Client, alice: User, bob: User, method: str, suffix: str
) -> None:
    conversation = conversation_create(owner=bob, title="Bob's")
    client.force_login(alice)

    response = getattr(client, method)(
        f"/c/{conversation.id}/{suffix}", {"content": "hi", "title": "x"}
    )

    assert response.status_code == 404
    assert Conversation.objects.get(id=conversation.id).title == "Bob's"
    assert not Message.objects.filter(conversation=conversation).exists()


def test_the_sidebar_lists_only_the_users_conversations(
    client: Client, alice: User, bob: User
) -> None:
    for owner, title in ((alice, "Alice's plans"), (bob, "Bob's secrets")):
        said = conversation_create(owner=owner, title=title)  # one without messages is not listed
        Message.objects.create(conversation=said, seq=1, role=Role.USER, content="Hello")
    client.force_login(alice)

    page = client.get("/").content.decode()

    assert "Alice&#x27;s plans" in page
    assert "Bob" not in page.replace("bob", "")


def test_a_too_long_message_is_a_clear_error_and_nothing_is_saved(
    client: Client, alice: User, settings
) -> None:
    settings.ORACLE_MAX_MESSAGE_CHARS = 100
    conversation = conversation_create(owner=alice)
    client.force_login(alice)

    response = client.post(f"/c/{conversation.id}/messages/", {"content": "x" * 101},
                           HTTP_HX_REQUEST="true")  # fmt: skip

    assert "At most 100 characters (this one has 101)." in response.content.decode()
    assert not Message.objects.exists()
    assert not Run.objects.exists()


def test_an_empty_message_is_refused(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    client.force_login(alice)

    response = client.post(
        f"/c/{conversation.id}/messages/", {"content": "   "}, HTTP_HX_REQUEST="true"
    )

    assert "Write a message first." in response.content.decode()
    assert not Run.objects.exists()


def test_rename_and_delete(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    client.force_login(alice)

    client.post(f"/c/{conversation.id}/rename/", {"title": "Holiday"})
    assert Conversation.objects.get(id=conversation.id).title == "Holiday"

    response = client.post(f"/c/{conversation.id}/delete/")
    assert response.status_code == 302
    assert client.get(f"/c/{conversation.id}/").status_code == 404


@pytest.mark.parametrize("title", ["", "  \n "])
def test_an_empty_rename_is_refused_by_the_field_and_the_title_stays(
    client: Client, alice: User, title: str
) -> None:
    conversation = conversation_create(owner=alice, title="Holiday")
    client.force_login(alice)

    response = client.post(
        f"/c/{conversation.id}/rename/", {"title": title}, HTTP_HX_REQUEST="true"
    )

    html = response.content.decode()
    assert response.status_code == 200  # a refusal the page shows, not a console error
    assert 'id="title-error"' in html and "A title cannot be empty." in html
    assert 'value="Holiday"' in html and 'aria-invalid="true"' in html  # the old one back
    assert Conversation.objects.get(id=conversation.id).title == "Holiday"


def test_a_rename_after_a_refusal_clears_the_error(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice, title="Holiday")
    client.force_login(alice)

    response = client.post(
        f"/c/{conversation.id}/rename/", {"title": "Trip to Rome"}, HTTP_HX_REQUEST="true"
    )

    html = response.content.decode()
    assert 'value="Trip to Rome"' in html and "aria-invalid" not in html
    assert 'role="alert" hx-swap-oob="true"></p>' in html  # the error's place, emptied
    assert Conversation.objects.get(id=conversation.id).title == "Trip to Rome"


def test_an_empty_rename_without_scripts_says_why_and_keeps_the_title(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice, title="Holiday")
    client.force_login(alice)

    response = client.post(f"/c/{conversation.id}/rename/", {"title": " "}, follow=True)

    html = response.content.decode()
    assert "A title cannot be empty." in html
    assert 'id="title" name="title" value="Holiday"' in html
    assert Conversation.objects.get(id=conversation.id).title == "Holiday"


def test_a_saved_step_the_stop_cut_short_shows_stopped_not_error(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    run = Run.objects.create(conversation=conversation, status=RunStatus.FINISHED,
                             reason="cancelled")  # fmt: skip
    Message.objects.create(
        conversation=conversation, run=run, seq=conversation.next_seq(), role=Role.TOOL,
        content="Not run: the run stopped first.",
        metadata={"id": "c1", "name": "fetch", "arguments": {}, "status": "done", "ok": False,
                  "not_run": "stopped"},
    )  # fmt: skip
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    assert '<span class="tool-status not-run">stopped</span>' in page
    assert "tool-status failed" not in page


def test_a_saved_answer_that_ended_at_the_iteration_limit_asking_for_tools_badges_that(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    run = Run.objects.create(conversation=conversation, status=RunStatus.FINISHED,
                             reason="tool_budget_violation")  # fmt: skip
    Message.objects.create(
        conversation=conversation, run=run, seq=conversation.next_seq(), role=Role.ASSISTANT,
        content="I reached the iteration limit (3 of 3) before I could finish.",
        termination_reason="tool_budget_violation",
        metadata={"final": True, "limit_metric": "iterations"},
    )  # fmt: skip
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    assert ">Iteration limit</span>" in page and "Tool-call budget" not in page
