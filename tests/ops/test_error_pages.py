"""Errors answer in the API's own JSON under /api/, and as the site's own pages elsewhere
(its layout, what happened, a way back): no debug page, no HTML to an API client."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client, RequestFactory

from chat.models import Conversation
from chat.services import conversation_create
from ops.errors import server_error

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


def main_part(response: HttpResponse) -> str:
    """What the page says in its <main> (the layout's header and sidebar left out)."""
    return response.content.decode().split('<main id="main"', 1)[1]


def test_an_unknown_page_wears_the_layout_and_leads_back_to_the_conversations(
    client: Client, alice: User
) -> None:
    client.force_login(alice)

    response = client.get("/no-such-page/")

    assert response.status_code == 404
    page = response.content.decode()
    assert '<header class="topbar">' in page
    assert '<span class="username">alice</span>' in page
    assert "This page does not exist" in main_part(response)
    assert '<a href="/">Back to your conversations</a>' in main_part(response)
    assert 'href="/login/"' not in main_part(response)


def test_a_logged_out_visitor_is_offered_to_log_in(client: Client) -> None:
    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert '<header class="topbar">' in response.content.decode()
    assert "This page does not exist" in main_part(response)
    assert '<a href="/login/">Log in</a>' in main_part(response)


def test_another_users_conversation_shows_the_same_404_page(
    client: Client, alice: User, bob: User
) -> None:
    conversation = conversation_create(owner=bob, title="Bob's secret plans")
    client.force_login(alice)

    response = client.get(f"/c/{conversation.id}/")

    assert response.status_code == 404
    assert "This page does not exist" in main_part(response)
    assert '<a href="/">Back to your conversations</a>' in main_part(response)
    assert "secret plans" not in response.content.decode()


def test_a_form_sent_with_an_expired_token_gets_the_403_page_and_changes_nothing(
    alice: User,
) -> None:
    client = Client(enforce_csrf_checks=True)
    conversation = conversation_create(owner=alice, title="Holiday")
    client.force_login(alice)

    response = client.post(f"/c/{conversation.id}/rename/", {"title": "Hijacked"})

    assert response.status_code == 403
    assert '<span class="username">alice</span>' in response.content.decode()
    said = main_part(response)
    assert "You cannot open this page" in said
    assert "reload the page and try again" in said
    assert '<a href="/">Back to your conversations</a>' in said
    assert Conversation.objects.get(id=conversation.id).title == "Holiday"


def test_a_logged_out_visitor_refused_a_form_is_offered_to_log_in() -> None:
    client = Client(enforce_csrf_checks=True)  # no CSRF cookie: cookies were blocked

    response = client.post("/login/", {"username": "alice", "password": "x"})

    assert response.status_code == 403
    assert "You cannot open this page" in main_part(response)
    assert '<a href="/login/">Log in</a>' in main_part(response)


def test_the_500_page_needs_neither_the_request_nor_the_database(
    django_assert_num_queries,
) -> None:
    with django_assert_num_queries(0):
        response = server_error(RequestFactory().get("/c/broken/"))

    assert response.status_code == 500
    page = response.content.decode()
    assert "Something went wrong on our side" in page
    assert '<a href="/">Back to your conversations</a>' in page
