"""Sign-up, log-in, log-out, and the login wall in front of everything else."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db

PASSWORD = "a long and unusual passphrase"


def sign_up(client: Client, username: str) -> object:
    return client.post(
        "/signup/", {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    )


def test_it_shows_the_sign_up_page_to_a_visitor(client: Client) -> None:
    response = client.get("/signup/")

    assert response.status_code == 200
    assert b"Create your account" in response.content


def test_it_signs_up_logs_in_and_makes_the_first_account_staff(client: Client) -> None:
    response = sign_up(client, "alice")

    assert response.status_code == 302
    assert response["Location"] == "/"
    alice = User.objects.get(username="alice")
    assert alice.is_staff and alice.is_superuser
    assert client.get("/").status_code == 200  # logged in by signing up


def test_it_does_not_make_later_accounts_staff(client: Client, alice: User) -> None:
    sign_up(client, "carol")

    carol = User.objects.get(username="carol")
    assert not carol.is_staff
    assert not carol.is_superuser


def test_it_refuses_a_taken_username_whatever_its_case(client: Client, alice: User) -> None:
    response = sign_up(client, "ALICE")

    assert response.status_code == 400
    assert b"already exists" in response.content
    assert User.objects.count() == 1


def test_it_refuses_mismatched_passwords_and_creates_nothing(client: Client) -> None:
    response = client.post(
        "/signup/", {"username": "dave", "password1": PASSWORD, "password2": PASSWORD + "x"}
    )

    assert response.status_code == 400
    assert not User.objects.filter(username="dave").exists()


def test_it_logs_in_with_the_right_password(client: Client, alice: User) -> None:
    response = client.post("/login/", {"username": "alice", "password": "correct horse battery"})

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.get("/").status_code == 200


def test_it_refuses_the_wrong_password(client: Client, alice: User) -> None:
    response = client.post("/login/", {"username": "alice", "password": "wrong"})

    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content
    assert client.get("/").status_code == 302


def test_it_logs_out_with_a_post(client: Client, alice: User) -> None:
    client.force_login(alice)

    response = client.post("/logout/")

    assert response.status_code == 302
    assert client.get("/").status_code == 302


@pytest.mark.parametrize("path", ["/", "/settings/", "/admin/"])
def test_it_sends_a_visitor_to_log_in(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 302
    assert "/login/" in response["Location"]


@override_settings(ORACLE_MODEL="")
def test_it_shows_the_layout_to_a_logged_in_user(client: Client, alice: User) -> None:
    client.force_login(alice)

    page = client.get("/").content.decode()

    assert 'aria-label="Conversations"' in page
    assert 'href="/settings/"' in page
    assert "alice" in page
    assert "/static/vendor/htmx/htmx-2.0.11.min.js" in page
    assert "X-CSRFToken" in page  # CSRF token in hx-headers on <body>
    assert "offline model" in page  # no ORACLE_MODEL in the test environment


def test_it_serves_the_vendored_htmx(client: Client) -> None:
    response = client.get("/static/vendor/htmx/htmx-2.0.11.min.js")

    assert response.status_code == 200
    assert b"htmx" in b"".join(response.streaming_content)
