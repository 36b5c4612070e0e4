"""Every page has an icon: linked from the head, and /favicon.ico answers for old clients."""

from __future__ import annotations

import re

from django.test import Client


def test_it_links_an_svg_icon_from_every_page(db: None):
    html = Client().get("/login/").content.decode()

    link = re.search(r'<link rel="icon"[^>]*href="([^"]+)"', html)
    assert link, "no icon link in the head"
    assert link.group(1).endswith(".svg")
    response = Client().get(link.group(1))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")


def test_favicon_ico_leads_to_the_icon_without_logging_in(db: None):
    response = Client().get("/favicon.ico", follow=True)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    assert b"<svg" in b"".join(response.streaming_content)
