"""Sign-up by invitation, as a visitor sees it: without an invite the page says how
to get in and shows no form; the administrator's link makes a staff account; too
many log-in attempts get a page that says when to try again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests import processes
from tests.browser.conftest import PASSWORD, each_look, serving_daphne


@pytest.fixture(scope="module")
def invite_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """daphne on a site whose sign-up is by invitation, with a strict log-in limit."""
    with serving_daphne(
        tmp_path_factory.mktemp("invite-only"),
        ORACLE_SIGNUP="invite",
        ORACLE_RATE_LOGIN_USER="2/h",
    ) as server:
        yield server.url, server.env


def _setup_link(env: dict[str, str]) -> str:
    code = "from accounts.services import setup_invite; print(setup_invite().path())"
    done = processes.shell(code, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_sign_up_by_invitation_as_a_visitor_sees_it(
    page: Any, invite_only: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, env = invite_only
    page.goto(f"{url}/signup/")
    expect(page.locator(".auth-card")).to_contain_text("Sign-up on this site is by invitation")
    expect(page.locator("input[name=password1]")).to_have_count(0)
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"signup-refused-{look}.png"), full_page=True)

    page.goto(f"{url}{_setup_link(env)}")
    page.fill("#id_username", "olga")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.click("button:has-text('Sign up')")
    page.wait_for_url(lambda address: "/signup/" not in address)
    page.goto(f"{url}/admin/")  # the link's account administers the site
    expect(page.locator("body")).to_contain_text("Site administration")


def test_too_many_log_in_attempts_get_a_page_that_says_when(
    page: Any, invite_only: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, _ = invite_only
    for _ in range(3):
        page.goto(f"{url}/login/")
        page.fill("#id_username", "nobody-here")
        page.fill("#id_password", "wrong")
        page.click("button[type=submit]")
    expect(page.locator(".auth-card")).to_contain_text("Too many attempts. Try again in")
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"too-many-{look}.png"), full_page=True)
