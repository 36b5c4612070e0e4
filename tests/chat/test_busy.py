"""A message cannot be sent while the conversation's run works or waits for the user:
the refusal says which, in the words the composer shows before it is tried, and
changes nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.models import Message, Run, RunStatus
from chat.services import BUSY, RunConflict, conversation_create, message_post

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}

STATES = {
    "working": {"status": RunStatus.RUNNING},
    "paused": {"status": RunStatus.PAUSED, "state": {"awaiting_approval": []}},
    "approval": {
        "status": RunStatus.PAUSED,
        "state": {"awaiting_approval": [{"id": "c1", "name": "fetch"}]},
    },
}


@pytest.mark.parametrize("state", STATES)
def test_the_refusal_says_what_the_run_is_doing(alice: User, state: str) -> None:
    conversation = conversation_create(owner=alice)
    _, run = message_post(conversation=conversation, content="First")
    Run.objects.filter(pk=run.pk).update(**STATES[state])

    with pytest.raises(RunConflict) as refused:
        message_post(conversation=conversation, content="Second")

    assert str(refused.value) == BUSY[state]
    assert Message.objects.count() == 1


@pytest.mark.parametrize("state", STATES)
def test_the_page_says_it_before_anything_is_typed(client: Client, alice: User, state: str) -> None:
    conversation = conversation_create(owner=alice)
    _, run = message_post(conversation=conversation, content="First")
    Run.objects.filter(pk=run.pk).update(**STATES[state])
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    note = page[page.index('id="composer-state"') :]
    note = note[: note.index("</p>")]
    assert f'data-initial="{state}"' in note and " hidden" not in note
    assert note.endswith(BUSY[state].replace("'", "&#x27;"))


def test_an_idle_conversation_shows_no_such_note(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    note = page[page.index('id="composer-state"') :]
    assert ' role="status" hidden' in note[: note.index(">")]


def test_a_refused_post_from_the_page_shows_why_and_saves_nothing(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    message_post(conversation=conversation, content="First")
    client.force_login(alice)

    refused = client.post(f"/c/{conversation.id}/messages/", {"content": "Again"}, **HTMX)

    assert refused.status_code == 200  # a refusal the page shows, not a console error
    assert 'hx-swap-oob="innerHTML:#composer-error"' in refused.content.decode()
    assert "still working on the last message" in refused.content.decode()
    assert list(Message.objects.values_list("content", flat=True)) == ["First"]


def test_a_refused_edit_answers_the_edit_box_and_changes_nothing(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    first, _ = message_post(conversation=conversation, content="First")
    client.force_login(alice)

    refused = client.post(
        f"/c/{conversation.id}/edit/", {"message": first.pk, "content": "Edited"}, **HTMX
    )

    assert refused.status_code == 200
    assert "HX-Redirect" not in refused.headers  # the box stays open, with its text
    assert "still working on the last message" in refused.content.decode()
    assert not Message.objects.filter(superseded=True).exists()
    assert Message.objects.count() == 1
