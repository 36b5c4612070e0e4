"""API tokens on the settings page: created and shown once, revoked, only one's own."""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from django.test import Client

from accounts.models import ApiToken
from accounts.services import api_token_create


def test_a_new_token_is_shown_once_and_works(alice: User, alice_client: Client):
    response = alice_client.post("/settings/tokens/", {"name": "laptop"})

    html = response.content.decode()
    raw = re.search(r'<code id="new-token" class="token-value">([^<]+)</code>', html).group(1)
    assert "it will not be shown again" in html
    assert "laptop" in html
    assert Client().get("/api/settings/", headers={"Authorization": f"Bearer {raw}"}).json()
    assert raw not in alice_client.get("/settings/").content.decode()


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
    assert alice_client.post(f"/settings/tokens/{token.pk}/revoke/").status_code == 404
    assert ApiToken.objects.filter(pk=token.pk).exists()
