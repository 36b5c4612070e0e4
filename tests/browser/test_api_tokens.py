"""API tokens in a real browser: a new token is in view with a Copy button, a reload
makes no second one, and Revoke asks first."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import each_look, sign_up

pytestmark = pytest.mark.browser
_users = itertools.count(1)


@pytest.fixture
def tokens_page(page: Any, live_server_url: str) -> Any:
    """A new user, signed up, on /settings/ (the tokens are below the fold)."""
    sign_up(page, live_server_url, f"token-user-{next(_users)}")
    page.goto(f"{live_server_url}/settings/")
    return page


def create_token(page: Any, name: str) -> None:
    page.fill("#token-name", name)
    with page.expect_navigation():  # to the page after the redirect, its scripts loaded
        page.get_by_role("button", name="Create token").click()


def test_a_new_token_is_in_view_and_copy_puts_it_on_the_clipboard(
    tokens_page: Any, live_server_url: str, tmp_path: Path
):
    page = tokens_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server_url)

    create_token(page, "laptop script")

    token = page.locator("#new-token")
    expect(token).to_be_in_viewport()
    raw = token.inner_text()
    assert raw.startswith("oracle_")
    copy = page.locator(".new-token").get_by_role("button")
    expect(copy).to_have_text("Copy")
    expect(copy).to_be_in_viewport()
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == raw
    expect(copy).to_have_text("Copy")  # after a moment
    for folder, look in each_look(page, tmp_path):
        token.scroll_into_view_if_needed()
        page.screenshot(path=str(folder / f"settings-new-token-{look}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


def test_a_reload_after_creating_a_token_makes_no_other(tokens_page: Any):
    page = tokens_page
    create_token(page, "laptop script")
    expect(page.locator("#new-token")).to_be_visible()
    expect(page.locator(".token-list .token")).to_have_count(1)

    page.reload()

    expect(page.locator(".token-list .token")).to_have_count(1)
    expect(page.locator("#new-token")).to_have_count(0)  # shown once only


def test_revoke_asks_first(tokens_page: Any):
    page = tokens_page
    create_token(page, "laptop script")
    token = page.locator(".token-list .token", has_text="laptop script")
    asked: list[str] = []

    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    token.get_by_role("button", name="Revoke").click()

    expect(token).to_have_count(1)
    assert len(asked) == 1 and "laptop script" in asked[0]
    page.reload()
    expect(token).to_have_count(1)  # cancelled: nothing was sent

    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    token.get_by_role("button", name="Revoke").click()

    expect(page.locator(".flash")).to_contain_text("revoked")
    expect(token).to_have_count(0)
    assert len(asked) == 2
