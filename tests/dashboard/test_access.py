"""The dashboard is for staff: anyone else, logged in or not, finds nothing there (404)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

pytestmark = pytest.mark.django_db

PAGES = ["/dashboard/", "/dashboard/runs/", "/dashboard/hours/", "/dashboard/runs/?reason=limit"]
POSTS = ["/dashboard/recommendations/apply/", "/dashboard/alerts/1/ack/"]


@pytest.mark.parametrize("url", PAGES)
def test_it_hides_the_pages_from_anonymous_visitors(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 404  # not a redirect to the log-in page


@pytest.mark.parametrize("url", PAGES)
def test_it_hides_the_pages_from_users_who_are_not_staff(
    client: Client, alice: User, url: str
) -> None:
    client.force_login(alice)
    assert client.get(url).status_code == 404


@pytest.mark.parametrize("url", POSTS)
def test_it_refuses_posts_from_users_who_are_not_staff(
    client: Client, alice: User, url: str
) -> None:
    data = {"agent_type": "researcher", "max_iterations": "5", "token_budget": "5000"}
    assert client.post(url, data).status_code == 404
    client.force_login(alice)
    assert client.post(url, data).status_code == 404


def test_it_hides_the_pages_from_inactive_staff(client: Client) -> None:
    former = User.objects.create_user("former", is_staff=True, is_active=False)
    client.force_login(former)
    assert client.get("/dashboard/").status_code == 404


def test_it_shows_the_pages_to_staff(staff_client: Client) -> None:
    for url in PAGES:
        assert staff_client.get(url).status_code == 200, url


def test_the_account_menu_links_the_dashboard_for_staff_only(
    client: Client, alice: User, staff: User
) -> None:
    client.force_login(alice)
    assert 'href="/dashboard/"' not in client.get("/settings/").content.decode()
    client.force_login(staff)
    assert 'href="/dashboard/">Dashboard</a>' in client.get("/settings/").content.decode()
