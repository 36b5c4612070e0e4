"""`manage.py create_api_token USER` prints a token that works for that user only."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_prints_a_token_that_authenticates_the_user(client: Client, alice: User) -> None:
    out = StringIO()
    call_command("create_api_token", "alice", stdout=out)
    raw = out.getvalue().strip()

    response = client.get("/api/conversations/", HTTP_AUTHORIZATION=f"Bearer {raw}")

    assert raw.startswith("oracle_")
    assert response.status_code == 200
    assert alice.api_tokens.get().last_used_at is not None
    assert raw not in alice.api_tokens.get().key_hash  # only a hash is stored


def test_an_unknown_user_is_a_clear_error(db: None) -> None:
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("create_api_token", "nobody")
