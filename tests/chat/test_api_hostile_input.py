"""Malformed input on the API gets a clear 4xx in JSON and changes nothing: JSON nested
past Python's recursion limit, text that cannot be stored (a lone surrogate, a NUL),
an event number that is not one."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.services import api_token_create
from chat.models import Conversation, Message, Run
from chat.services import conversation_create

pytestmark = pytest.mark.django_db
NESTED = "[" * 5_000 + "]" * 5_000


def bearer(user: User) -> dict[str, str]:
    _, raw = api_token_create(user=user, name="test")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def send(client: Client, method: str, path: str, body: str, headers: dict[str, str]) -> object:
    return getattr(client, method)(path, body, content_type="application/json", **headers)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/conversations/"),
        ("patch", "/api/conversations/{id}/"),
        ("post", "/api/conversations/{id}/messages/"),
        ("patch", "/api/settings/"),
    ],
)
@pytest.mark.parametrize(
    "body",
    [
        NESTED,
        '{"title": ' + "[" * 5_000 + "]" * 5_000 + "}",
        '{"title": "\\ud800", "content": "\\ud800"}',  # a lone surrogate
        '{"title": "a\\u0000b", "content": "a\\u0000b"}',  # PostgreSQL stores no NUL
    ],
    ids=["nested", "nested-value", "surrogate", "nul"],
)
def test_bad_bodies_get_a_400_in_json_and_change_nothing(
    client: Client, alice: User, method: str, path: str, body: str
) -> None:
    conversation = conversation_create(owner=alice, title="Kept")
    headers = bearer(alice)

    response = send(client, method, path.format(id=conversation.pk), body, headers)

    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"] == "application/json"
    assert Conversation.objects.get().title == "Kept"
    assert Conversation.objects.count() == 1
    assert not Message.objects.exists()


@pytest.mark.parametrize("after", ["²", "٣", "1" * 5_000, "-1", "1.5"])
def test_an_event_number_that_is_not_one_gets_a_400(
    client: Client, alice: User, after: str
) -> None:
    conversation = conversation_create(owner=alice, title="Kept")
    run = Run.objects.create(conversation=conversation)

    by_query = client.get(f"/api/runs/{run.pk}/events/", {"after": after}, **bearer(alice))
    by_header = client.get(f"/api/runs/{run.pk}/events/", HTTP_LAST_EVENT_ID=after, **bearer(alice))

    for response in (by_query, by_header):
        assert response.status_code == 400
        assert "event number" in response.json()["error"]
