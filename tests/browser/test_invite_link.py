"""Staff in Chromium make an invite in the admin: its page shows the sign-up link in
full, and Copy (by mouse or by keyboard) puts that link on the clipboard."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests import processes
from tests.browser.conftest import PASSWORD, LiveServer, each_look, log_in

pytestmark = pytest.mark.browser


def _clipboard(page: Any) -> str:
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_staff_copy_a_new_invites_full_link(
    page: Any, daphne_server: LiveServer, tmp_path: Path
) -> None:
    staff = f"invite-staff-{uuid.uuid4().hex[:8]}"
    made = processes.shell(
        "from django.contrib.auth.models import User; "
        f"User.objects.create_user({staff!r}, password={PASSWORD!r}, "
        "is_staff=True, is_superuser=True)",
        env=daphne_server.env,
    )
    assert made.returncode == 0, made.stderr
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=daphne_server.url)
    log_in(page, daphne_server.url, staff)
    page.goto(f"{daphne_server.url}/admin/accounts/invite/add/")
    page.fill("input[name=note]", "For Bob")
    page.click("input[name=_continue]")  # Save and continue editing

    shown = page.locator(".copy-link code")
    expect(shown).to_have_text(re.compile(re.escape(daphne_server.url) + r"/signup/\?invite=\S+$"))
    link = shown.inner_text()
    copy = page.get_by_role("button", name="Copy the sign-up link")
    copy.focus()
    page.keyboard.press("Enter")
    expect(copy).to_have_text("Copied")
    assert _clipboard(page) == link
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"admin-invite-{look}.png"))

    page.evaluate("navigator.clipboard.writeText('')")
    page.goto(f"{daphne_server.url}/admin/accounts/invite/")  # the list: the same link
    row = page.locator("tr", has_text="For Bob")
    expect(row.locator(".copy-link code")).to_have_text(link)
    row.get_by_role("button", name="Copy the sign-up link").click()
    expect(row.get_by_role("button", name="Copy the sign-up link")).to_have_text("Copied")
    assert _clipboard(page) == link
    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"admin-invites-{look}.png"))

    visitor = page.context.browser.new_context()  # whoever it is sent to: its sign-up page
    try:
        invited = visitor.new_page()
        invited.goto(link)
        expect(invited.locator("input[name=username]")).to_be_visible()
    finally:
        visitor.close()
