"""A person changes their own password from Settings, with the keyboard alone, and logs
in with the new one."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import each_look, log_in
from tests.stack import OracleStack

pytestmark = pytest.mark.browser
_people = itertools.count(1)
NEW = "a brand new secret 42"


def test_a_person_changes_their_password_and_logs_in_with_it(
    page: Any, stack: OracleStack, tmp_path: Path
) -> None:
    name = f"renewer-{next(_people)}"
    stack.create_user(name)
    log_in(page, stack.url, name)
    page.goto(f"{stack.url}/settings/")
    page.get_by_role("link", name="Change your password").click()
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"password-change-{look}.png"))

    page.get_by_label("Old password").fill("correct horse battery")
    page.keyboard.press("Tab")
    page.keyboard.type(NEW)
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # past the rules under the field
    page.get_by_label("New password confirmation").fill(NEW)
    page.keyboard.press("Enter")

    expect(page.get_by_text("Your password was changed.")).to_be_visible()
    page.locator("#account-button").click()
    page.get_by_role("button", name="Log out").click()
    log_in(page, stack.url, name, NEW)
    expect(page.locator("#account-button")).to_contain_text(name)
