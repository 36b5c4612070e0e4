"""The settings page in a real browser: autosave, inline errors, reload, phone width."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, sign_up

pytestmark = pytest.mark.browser
_users = itertools.count(1)


@pytest.fixture
def settings_page(page: Any, live_server_url: str) -> Any:
    """A new user, signed up, on /settings/."""
    sign_up(page, live_server_url, f"settings-user-{next(_users)}")
    page.goto(f"{live_server_url}/settings/")
    return page


@pytest.fixture
def logged_in_settings_page(page: Any, live_server_url: str, browser_user: str) -> Any:
    """The session's user, logged in through the login page, on /settings/."""
    log_in(page, live_server_url, browser_user)
    page.goto(f"{live_server_url}/settings/")
    return page


def test_a_change_is_saved_by_itself_and_kept_after_a_reload(logged_in_settings_page: Any):
    page = logged_in_settings_page
    page.fill("#id_max_iterations", "22")

    expect(page.locator("#status-max_iterations")).to_contain_text("Saved")
    page.reload()
    expect(page.locator("#id_max_iterations")).to_have_value("22")


def test_a_bad_value_shows_an_error_and_the_stored_value_stays(logged_in_settings_page: Any):
    page = logged_in_settings_page
    page.fill("#id_max_iterations", "22")
    expect(page.locator("#status-max_iterations")).to_contain_text("Saved")

    page.fill("#id_max_iterations", "0")

    status = page.locator("#status-max_iterations")
    expect(status).to_contain_text("Must be between 1 and 50.")
    expect(page.locator("#id_max_iterations")).to_have_value("0")  # kept, to correct
    expect(page.locator("#id_max_iterations")).to_have_attribute("aria-invalid", "true")
    page.reload()
    expect(page.locator("#id_max_iterations")).to_have_value("22")


def test_the_slider_moves_the_number_and_saves_it(settings_page: Any):
    page = settings_page
    page.locator("#setting-timeout_seconds .slider").fill("300")

    expect(page.locator("#id_timeout_seconds")).to_have_value("300")
    expect(page.locator("#status-timeout_seconds")).to_contain_text("Saved")


def test_the_extend_fields_show_only_for_extend(settings_page: Any):
    page = settings_page
    expect(page.locator("#id_extend_multiplier")).to_be_hidden()

    page.select_option("#id_limit_action", "extend")

    expect(page.locator("#id_extend_multiplier")).to_be_visible()
    expect(page.locator("#status-limit_action")).to_contain_text("Saved")
    page.reload()
    expect(page.locator("#id_max_extensions")).to_be_visible()


def test_the_page_fits_a_phone(settings_page: Any):
    page = settings_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()

    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    expect(page.locator("#id_max_iterations")).to_be_in_viewport(ratio=0.5)


def test_without_javascript_the_form_saves_everything_at_once(browser: Any, live_server_url: str):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        sign_up(page, live_server_url, f"settings-user-{next(_users)}")
        page.goto(f"{live_server_url}/settings/")

        page.fill("#id_token_budget", "12000")
        page.click("text=Save settings")

        expect(page.locator(".flash")).to_contain_text("Settings saved.")
        expect(page.locator("#id_token_budget")).to_have_value("12000")
        expect(page.locator("text=Save settings")).to_be_visible()
    finally:
        context.close()
