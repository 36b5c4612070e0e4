"""The Tools page's switch for a server nobody configured: the site's own 404 page,
which never repeats the name it was sent (a link could carry markup in it)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.contrib.auth.models import User
from django.test import Client

from toolbox.models import ToolPreferences

pytestmark = pytest.mark.django_db

NAMES = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "no-such-server"]


@pytest.mark.parametrize("name", NAMES)
def test_an_unknown_server_gets_the_sites_404_page_without_the_name(
    client: Client, alice: User, name: str
) -> None:
    client.force_login(alice)

    response = client.post(f"/tools/{quote(name, safe='')}/switch/", {"enabled": "0"})

    assert response.status_code == 404
    page = response.content.decode()
    assert "This page does not exist" in page
    assert '<a href="/">Back to your conversations</a>' in page
    assert name not in page
    assert "alert(1)" not in page
    assert not ToolPreferences.objects.exists()
