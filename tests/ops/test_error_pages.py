"""Errors answer in the API's own JSON under /api/, and as plain pages elsewhere: no
debug page, no HTML to an API client."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.models import Conversation

pytestmark = pytest.mark.django_db


def test_an_oversized_api_body_gets_a_413_in_json_and_changes_nothing(
    client: Client, alice: User
) -> None:
    client.force_login(alice)
    body = '{"title": "' + "x" * 3_000_000 + '"}'  # past Django's 2.5 MB limit

    response = client.post("/api/conversations/", body, content_type="application/json")

    assert response.status_code == 413
    assert response.json() == {"error": "The request body is too large."}
    assert not Conversation.objects.exists()


def test_an_unknown_api_address_gets_a_404_in_json(client: Client, alice: User) -> None:
    client.force_login(alice)

    response = client.get("/api/no-such-thing/")

    assert response.status_code == 404
    assert response.json() == {"error": "Not found."}


def test_an_unknown_page_gets_a_plain_404(client: Client, alice: User) -> None:
    client.force_login(alice)

    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert "URLconf" not in response.content.decode()  # not Django's debug page
