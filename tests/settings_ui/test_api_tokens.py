"""API tokens on the settings page: created and shown once, revoked, only one's own."""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from django.test import Client

from accounts.models import ApiToken
from accounts.services import api_token_create

NEW_TOKEN = re.compile(r'<code id="new-token" class="token-value">([^<]+)</code>')


def test_a_new_token_is_shown_once_and_works(alice: User, alice_client: Client):
    response = alice_client.post("/settings/tokens/", {"name": "laptop"}, follow=True)

    html = response.content.decode()
    raw = NEW_TOKEN.search(html).group(1)
    assert "it will not be shown again" in html
    assert "laptop" in html
    assert Client().get("/api/settings/", headers={"Authorization": f"Bearer {raw}"}).json()
    assert raw not in alice_client.get("/settings/").content.decode()


def test_creating_a_token_redirects_and_the_next_page_alone_shows_it(
    alice: User, alice_client: Client
):
    response = alice_client.post("/settings/tokens/", {"name": "laptop"})

    assert response.status_code == 302
    assert response["Location"] == "/settings/#new-token"
    assert ApiToken.objects.filter(user=alice).count() == 1
    shown = alice_client.get(response["Location"]).content.decode()
    raw = NEW_TOKEN.search(shown).group(1)
    assert ApiToken.objects.get(user=alice).hint == raw[: len(ApiToken.PREFIX) + 4]
    for _ in range(3):  # each reload is a GET: no second token, and the first is gone
        again = alice_client.get("/settings/").content.decode()
        assert raw not in again
        assert "it will not be shown again" not in again
    assert ApiToken.objects.filter(user=alice).count() == 1


def test_a_new_token_is_shown_to_its_own_session_only(
    alice: User, alice_client: Client, bob_client: Client
):
    alice_client.post("/settings/tokens/", {"name": "laptop"})
    alice_in_another_browser = Client()
    alice_in_another_browser.force_login(alice)

    for client in (bob_client, alice_in_another_browser):
        assert "it will not be shown again" not in client.get("/settings/").content.decode()
    assert NEW_TOKEN.search(alice_client.get("/settings/").content.decode())


def test_a_revoked_token_stops_working(alice: User, alice_client: Client):
    token, raw = api_token_create(user=alice, name="old script")

    response = alice_client.post(f"/settings/tokens/{token.pk}/revoke/", follow=True)

    assert f"Token {token.hint}… revoked." in response.content.decode()
    assert "old script" not in response.content.decode()
    assert (
        Client().get("/api/settings/", headers={"Authorization": f"Bearer {raw}"}).status_code
        == 401
    )


def test_another_users_token_cannot_be_seen_nor_revoked(bob: User, alice_client: Client):
    token, _ = api_token_create(user=bob, name="bob's script")

    assert "bob&#x27;s script" not in alice_client.get("/settings/").content.decode()
    response = alice_client.post(f"/settings/tokens/{token.pk}/revoke/")

    assert response.status_code == 404
    assert "No such token: nothing was revoked." in response.content.decode()
    assert ApiToken.objects.filter(pk=token.pk).exists()


def test_revoking_an_unknown_token_changes_nothing_and_says_so(alice: User, alice_client: Client):
    token, _ = api_token_create(user=alice, name="kept")
    alice_client.post(f"/settings/tokens/{token.pk}/revoke/")  # gone, as in another tab

    kept, _ = api_token_create(user=alice, name="still here")
    response = alice_client.post(f"/settings/tokens/{token.pk}/revoke/")

    assert response.status_code == 404
    html = response.content.decode()
    assert "No such token: nothing was revoked." in html
    assert "still here" in html
    assert list(ApiToken.objects.filter(user=alice)) == [kept]
