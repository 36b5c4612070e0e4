"""Sign-up, log-in, log-out, and the login wall in front of everything else."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from accounts.models import Invite
from accounts.services import setup_invite

pytestmark = pytest.mark.django_db

PASSWORD = "a long and unusual passphrase"


@pytest.fixture(autouse=True)
def open_sign_up(settings: Any) -> None:
    """Anyone may sign up, unless a test says otherwise."""
    settings.ORACLE_SIGNUP = "open"


def sign_up(client: Client, username: str) -> Any:
    return client.post(
        "/signup/", {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    )


def test_it_shows_the_sign_up_page_to_a_visitor(client: Client) -> None:
    response = client.get("/signup/")

    assert response.status_code == 200
    assert b"Create your account" in response.content


def test_it_signs_up_and_logs_in_but_the_first_account_is_not_staff_for_that(
    client: Client,
) -> None:
    response = sign_up(client, "alice")

    assert response.status_code == 302
    assert response["Location"] == "/"
    alice = User.objects.get(username="alice")
    assert not alice.is_staff and not alice.is_superuser  # whoever came first
    assert client.get("/").status_code == 200  # logged in by signing up


@pytest.mark.parametrize("mode", ["open", "invite", "closed"])
def test_the_staff_invite_makes_the_administrator_once_whatever_the_mode(
    client: Client, mode: str
) -> None:
    with override_settings(ORACLE_SIGNUP=mode):
        invite = setup_invite()
        assert invite is not None
        page = client.get(invite.path())
        response = client.post(
            "/signup/", {"username": "olga", "password1": PASSWORD, "password2": PASSWORD,
                         "invite": invite.code},
        )  # fmt: skip
        client.logout()
        again = client.post(
            "/signup/", {"username": "mallory", "password1": PASSWORD, "password2": PASSWORD,
                         "invite": invite.code},
        )  # fmt: skip

    assert page.status_code == 200 and invite.code.encode() in page.content
    assert response.status_code == 302
    olga = User.objects.get(username="olga")
    assert olga.is_staff and olga.is_superuser
    assert again.status_code == 403  # used: it makes no second account
    assert b"used already" in again.content
    assert not User.objects.filter(username="mallory").exists()
    assert setup_invite() is None  # the site has its administrator


@pytest.mark.parametrize(
    ("mode", "invited", "allowed"),
    [
        ("open", False, True),
        ("open", True, True),
        ("invite", False, False),
        ("invite", True, True),
        ("closed", False, False),
        ("closed", True, False),  # only a staff invite opens a closed site
    ],
)
def test_who_may_sign_up_follows_the_sites_rule(
    client: Client, alice: User, mode: str, invited: bool, allowed: bool
) -> None:
    invite = Invite.objects.create(created_by=alice) if invited else None
    form = {"username": "carol", "password1": PASSWORD, "password2": PASSWORD}
    if invite is not None:
        form["invite"] = invite.code

    with override_settings(ORACLE_SIGNUP=mode):
        response = client.post("/signup/", form)

    assert (response.status_code == 302) is allowed
    assert User.objects.filter(username="carol").exists() is allowed
    if allowed:
        assert not User.objects.get(username="carol").is_staff
    else:
        assert response.status_code == 403
        assert b'name="password1"' not in response.content  # no form: it says why


@pytest.mark.parametrize(
    ("mode", "offered"), [("open", True), ("invite", False), ("closed", False)]
)
def test_the_pages_offer_sign_up_only_where_anyone_may(
    client: Client, mode: str, offered: bool
) -> None:
    """An invited visitor comes with a link; the others would only meet a refusal."""
    with override_settings(ORACLE_SIGNUP=mode):
        body = client.get("/login/").content.decode()

    assert body.count('href="/signup/"') == (2 if offered else 0)  # the header's and the form's
    assert 'href="/login/"' in body  # the header still offers to log in


def test_an_invite_that_is_not_ours_is_refused(client: Client) -> None:
    with override_settings(ORACLE_SIGNUP="open"):
        response = client.get("/signup/?invite=made-up")

    assert response.status_code == 403
    assert b"not one of ours" in response.content


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


def test_a_person_changes_their_own_password_and_stays_logged_in(
    client: Client, alice: User
) -> None:
    client.force_login(alice)
    assert 'href="/account/password/"' in client.get("/settings/").content.decode()

    changed = client.post(
        "/account/password/",
        {"old_password": "correct horse battery", "new_password1": "a brand new secret 42",
         "new_password2": "a brand new secret 42"},
        follow=True,
    )  # fmt: skip

    assert changed.redirect_chain[-1][0] == "/settings/"
    assert "Your password was changed." in changed.content.decode()
    assert client.get("/").status_code == 200  # still logged in
    alice.refresh_from_db()
    assert alice.check_password("a brand new secret 42")


def test_a_wrong_old_password_changes_nothing_and_says_so(client: Client, alice: User) -> None:
    client.force_login(alice)

    refused = client.post(
        "/account/password/",
        {"old_password": "not it", "new_password1": "a brand new secret 42",
         "new_password2": "a brand new secret 42"},
    )  # fmt: skip

    assert refused.status_code == 200
    assert "Your old password was entered incorrectly" in refused.content.decode()
    alice.refresh_from_db()
    assert alice.check_password("correct horse battery")
