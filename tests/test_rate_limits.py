"""Rate limits on log-in, sign-up and API tokens: past the limit a 429 says when to try
again (Retry-After), and nothing is done. The counts live in the shared Redis for a
minute or an hour, so each test knocks from addresses and as users of its own."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.services import api_token_create

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def strict(settings: Any) -> None:
    # The defaults' numbers, per hour: a count restarts when its window does (at a
    # fixed time), and a minute's window could turn during a test.
    settings.ORACLE_RATE_LIMITS = {
        "login_ip": "20/h", "login_user": "5/h", "signup_ip": "10/h", "bad_token_ip": "30/h",
    }  # fmt: skip
    settings.ORACLE_SIGNUP = "open"


def addresses() -> str:
    """The first three parts of addresses no other test run uses: "10.37.201"."""
    return f"10.{random.randrange(256)}.{random.randrange(256)}"


def someone() -> User:
    return User.objects.create_user(f"u{uuid.uuid4().hex[:10]}", password="correct horse battery")


def log_in(client: Client, username: str, password: str, address: str) -> Any:
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_five_wrong_passwords_lock_the_username_for_a_while_from_anywhere(
    client: Client,
) -> None:
    net, victim, other = addresses(), someone(), someone()
    tries = [log_in(client, victim.username, "wrong", f"{net}.{n}") for n in range(5)]
    right = "correct horse battery"
    locked = log_in(client, victim.username.upper(), right, f"{net}.99")  # even right

    assert [t.status_code for t in tries] == [200] * 5  # the form again, with its error
    assert locked.status_code == 429
    assert 1 <= int(locked["Retry-After"]) <= 3600
    assert b"Too many attempts. Try again in" in locked.content
    assert client.get("/").status_code == 302  # not logged in
    assert log_in(client, other.username, "wrong", f"{net}.99").status_code == 200


def test_one_address_trying_many_usernames_is_stopped(client: Client) -> None:
    net, name = addresses(), uuid.uuid4().hex[:8]
    tries = [log_in(client, f"{name}{n}", "guess", f"{net}.1") for n in range(20)]

    assert [t.status_code for t in tries] == [200] * 20
    assert log_in(client, f"{name}x", "guess", f"{net}.1").status_code == 429
    assert log_in(client, f"{name}x", "guess", f"{net}.2").status_code == 200


def test_sign_ups_from_one_address_are_limited(client: Client) -> None:
    net = addresses()

    def sign_up(n: int) -> Any:
        password = "a long and unusual passphrase"
        form = {"username": f"new{n}", "password1": password, "password2": password}
        return Client().post("/signup/", form, REMOTE_ADDR=f"{net}.1")

    made = [sign_up(n) for n in range(10)]
    refused = sign_up(10)

    assert [m.status_code for m in made] == [302] * 10
    assert refused.status_code == 429
    assert not User.objects.filter(username="new10").exists()


def test_guessing_api_tokens_is_stopped_and_real_tokens_still_work(
    client: Client, alice: User
) -> None:
    net = addresses()
    _, real = api_token_create(user=alice, name="mine")

    def ask(token: str, address: str) -> Any:
        return client.get(
            "/api/conversations/", HTTP_AUTHORIZATION=f"Bearer {token}", REMOTE_ADDR=address
        )

    guesses = [ask(f"guess-{n}", f"{net}.1") for n in range(30)]
    stopped = ask("guess-30", f"{net}.1")
    even_real = ask(real, f"{net}.1")  # that address waits, whatever it sends

    assert [g.status_code for g in guesses] == [401] * 30
    assert stopped.status_code == 429
    assert stopped.json()["retry_after"] == int(stopped["Retry-After"])
    assert even_real.status_code == 429
    assert ask(real, f"{net}.2").status_code == 200  # the owner elsewhere is not affected
