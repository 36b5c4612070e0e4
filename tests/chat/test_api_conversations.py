"""The conversations API: session or bearer token, owner-scoped, clear 400s."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.services import api_token_create
from chat.models import Conversation
from chat.services import conversation_create

pytestmark = pytest.mark.django_db


def bearer(user: User) -> dict[str, str]:
    _, raw = api_token_create(user=user, name="test")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def post_json(client: Client, path: str, data: object, **headers: str) -> object:
    return client.post(path, json.dumps(data), content_type="application/json", **headers)


def test_it_creates_a_conversation_with_a_bearer_token(client: Client, alice: User) -> None:
    response = post_json(client, "/api/conversations/", {}, **bearer(alice))

    assert response.status_code == 201
    body = response.json()
    assert body["skill"] == "default"
    assert Conversation.objects.get(id=body["id"]).owner == alice


def test_it_lists_only_the_users_conversations(client: Client, alice: User, bob: User) -> None:
    mine = conversation_create(owner=alice, title="Mine")
    conversation_create(owner=bob, title="Bob's")
    client.force_login(alice)

    body = client.get("/api/conversations/").json()

    assert [c["id"] for c in body["conversations"]] == [str(mine.id)]


def test_it_shows_a_conversation_with_messages_and_runs(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice, title="Plans")
    client.force_login(alice)

    body = client.get(f"/api/conversations/{conversation.id}/").json()

    assert body["title"] == "Plans"
    assert body["messages"] == []
    assert body["runs"] == []


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_another_users_conversation_answers_404(
    client: Client, alice: User, bob: User, method: str
) -> None:
    conversation = conversation_create(owner=bob, title="Bob's")
    client.force_login(alice)

    path = f"/api/conversations/{conversation.id}/"
    if method == "get":
        response = client.get(path)
    else:
        response = getattr(client, method)(path, "{}", content_type="application/json")

    assert response.status_code == 404
    assert Conversation.objects.get(id=conversation.id).title == "Bob's"


def test_a_malformed_id_answers_404(client: Client, alice: User) -> None:
    client.force_login(alice)

    assert client.get("/api/conversations/not-a-uuid/").status_code == 404


def test_it_renames_and_deletes(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    client.force_login(alice)
    headers = {"HTTP_X_CSRFTOKEN": "ignored"}  # the test client skips CSRF checks

    renamed = client.patch(
        f"/api/conversations/{conversation.id}/",
        json.dumps({"title": "  Trip   to Rome "}),
        content_type="application/json",
        **headers,
    )
    assert renamed.json()["title"] == "Trip to Rome"

    assert client.delete(f"/api/conversations/{conversation.id}/").status_code == 204
    assert client.get(f"/api/conversations/{conversation.id}/").status_code == 404


@pytest.mark.parametrize("title", ["", "  \t "])
def test_an_empty_title_is_refused_and_the_title_stays(
    client: Client, alice: User, title: str
) -> None:
    conversation = conversation_create(owner=alice, title="Plans")
    client.force_login(alice)

    response = client.patch(
        f"/api/conversations/{conversation.id}/",
        json.dumps({"title": title}),
        content_type="application/json",
    )

    assert response.status_code == 400
    assert response.json() == {"errors": {"title": ["A title cannot be empty."]}}
    assert Conversation.objects.get(id=conversation.id).title == "Plans"


def test_a_patch_without_a_title_keeps_it(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice, title="Plans")
    client.force_login(alice)

    response = client.patch(
        f"/api/conversations/{conversation.id}/", "{}", content_type="application/json"
    )

    assert response.status_code == 200
    assert response.json()["title"] == "Plans"
    assert Conversation.objects.get(id=conversation.id).title == "Plans"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ("not json", "body"),
        ("[1, 2]", "body"),
        (json.dumps({"skill": "no-such-skill"}), "skill"),
        (json.dumps({"skill": 3}), "skill"),
        (json.dumps({"title": "x" * 201}), "title"),
        (json.dumps({"title": ["list"]}), "title"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_creates_nothing(
    client: Client, alice: User, payload: str, field: str
) -> None:
    client.force_login(alice)

    response = client.post("/api/conversations/", payload, content_type="application/json")

    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not Conversation.objects.exists()


def test_a_bad_token_is_401_and_no_login_is_401(client: Client, alice: User) -> None:
    bad = client.get("/api/conversations/", HTTP_AUTHORIZATION="Bearer oracle_nope")
    anonymous = client.get("/api/conversations/")

    assert bad.status_code == 401
    assert anonymous.status_code == 401
    assert "error" in anonymous.json()


def test_a_revoked_token_stops_working(client: Client, alice: User) -> None:
    token, raw = api_token_create(user=alice)
    token.delete()

    response = client.get("/api/conversations/", HTTP_AUTHORIZATION=f"Bearer {raw}")

    assert response.status_code == 401


def test_a_session_request_needs_the_csrf_token(alice: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)

    refused = post_json(client, "/api/conversations/", {})
    client.get("/")  # sets the CSRF cookie, as the page does
    accepted = post_json(
        client, "/api/conversations/", {}, HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value
    )

    assert refused.status_code == 403
    assert accepted.status_code == 201
    assert Conversation.objects.count() == 1


def test_a_bearer_request_needs_no_csrf_token(alice: User) -> None:
    client = Client(enforce_csrf_checks=True)

    response = post_json(client, "/api/conversations/", {}, **bearer(alice))

    assert response.status_code == 201


def test_an_unsupported_method_is_405(client: Client, alice: User) -> None:
    client.force_login(alice)

    assert client.put("/api/conversations/").status_code == 405
