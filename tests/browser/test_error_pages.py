"""A page that does not exist still wears the site's layout and leads back home."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import each_look, log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser


def test_a_missing_page_shows_the_layout_and_the_way_back(
    page: Any, stack: OracleStack, tmp_path: Path
) -> None:
    name = f"lost-{uuid.uuid4().hex[:8]}"
    stack.create_user(name)
    log_in(page, stack.url, name)

    response = page.goto(f"{stack.url}/no-such-page/")

    assert response.status == 404
    expect(page.locator(".topbar .username")).to_have_text(name)
    expect(page.get_by_role("heading", name="This page does not exist")).to_be_visible()
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"page-not-found-{look}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]

    page.get_by_role("link", name="Back to your conversations").click()
    expect(page).to_have_url(f"{stack.url}/")
    expect(page.locator("#composer-input")).to_be_visible()
