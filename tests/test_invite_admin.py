"""Staff make an invite in the admin and see its sign-up link in full, as the site is
reached (scheme, host and port), with a Copy button: a link to send as it is."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.models import Invite

pytestmark = pytest.mark.django_db
HOST = "localhost:8000"


@pytest.fixture
def staff(client: Client) -> Client:
    admin = User.objects.create_user("alice", is_staff=True, is_superuser=True)
    client.force_login(admin)
    return client


def test_it_shows_a_new_invites_full_link_with_copy_on_its_page_and_in_the_list(
    staff: Client,
) -> None:
    added = staff.post(
        "/admin/accounts/invite/add/", {"note": "For Bob", "_continue": "1"}, HTTP_HOST=HOST
    )

    invite = Invite.objects.get()
    assert added.status_code == 302
    assert added["Location"] == f"/admin/accounts/invite/{invite.pk}/change/"
    link = f"http://{HOST}/signup/?invite={invite.code}"
    for page in (added["Location"], "/admin/accounts/invite/"):
        shown = staff.get(page, HTTP_HOST=HOST).content.decode()
        assert f"<code>{link}</code>" in shown, page
        assert f'data-copy="{link}"' in shown, page
        assert "/static/js/copy_link.js" in shown, page
    # the host the page was asked for: another, another link
    assert f"http://testserver/signup/?invite={invite.code}" in staff.get(page).content.decode()


def test_a_new_invite_has_no_link_until_it_is_saved(staff: Client) -> None:
    page = staff.get("/admin/accounts/invite/add/", HTTP_HOST=HOST).content.decode()

    assert "Shown once saved." in page
    assert "data-copy" not in page


def test_an_invite_changed_in_the_admin_keeps_its_link(staff: Client) -> None:
    invite = Invite.objects.create(note="For Bob")

    changed = staff.post(f"/admin/accounts/invite/{invite.pk}/change/", {"note": "For Carol"})

    assert changed.status_code == 302
    assert Invite.objects.get().note == "For Carol"
    assert Invite.objects.get().code == invite.code
