"""The settings page in a real browser: autosave, inline errors, reload, phone width."""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import each_look, log_in, serving_daphne, sign_up

pytestmark = pytest.mark.browser
_users = itertools.count(1)
START = datetime.datetime(2025, 1, 6, 9, 0, 0)
DEFAULT_MODEL = "anthropic/claude-3-5-sonnet-20241022"
OTHER_MODELS = ["openrouter/meta-llama/llama-3.1-70b-instruct", "openai/gpt-4o-mini"]


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


def stop_the_clock(page: Any) -> None:
    """Fake the page's timers and hold them: the 400 ms autosave delay never runs out by
    itself, so what saves a value is the blur or the leaving, not the wait."""
    page.clock.install(time=START)
    page.reload()
    page.clock.pause_at(START + datetime.timedelta(minutes=1))


def test_a_value_waiting_for_its_save_is_not_shown_as_saved(settings_page: Any):
    page = settings_page
    stop_the_clock(page)
    page.fill("#id_max_iterations", "22")
    page.clock.run_for(500)
    status = page.locator("#status-max_iterations")
    expect(status).to_contain_text("Saved")

    page.fill("#id_max_iterations", "23")  # within the 400 ms: not sent yet

    expect(status).not_to_contain_text("Saved")
    expect(status).to_contain_text("Unsaved")
    page.clock.run_for(500)
    expect(status).to_contain_text("Saved")


def test_leaving_the_field_saves_it_at_once(settings_page: Any):
    page = settings_page
    stop_the_clock(page)

    page.fill("#id_max_iterations", "24")
    page.locator("#id_max_iterations").blur()

    expect(page.locator("#status-max_iterations")).to_contain_text("Saved")
    page.goto(page.url)
    expect(page.locator("#id_max_iterations")).to_have_value("24")


@pytest.mark.parametrize("leave", ["brand link", "address bar"])
def test_a_change_made_just_before_leaving_the_page_is_kept(
    settings_page: Any, live_server_url: str, leave: str
):
    page = settings_page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    stop_the_clock(page)

    page.fill("#id_token_budget", "12345")
    if leave == "brand link":
        page.click(".brand")
        page.wait_for_url(f"{live_server_url}/")
    else:
        page.goto(f"{live_server_url}/")

    page.goto(f"{live_server_url}/settings/")
    expect(page.locator("#id_token_budget")).to_have_value("12345")
    assert dialogs == []  # the change was sent, so nothing to warn about


def test_leaving_warns_when_a_change_could_not_be_saved(settings_page: Any, live_server_url: str):
    page = settings_page
    page.route("**/settings/fields/**", lambda route: route.abort())
    page.on("dialog", lambda dialog: dialog.dismiss())  # the person chooses to stay

    page.locator("#id_max_iterations").fill("31")
    page.locator("#id_max_iterations").blur()
    expect(page.locator("#status-max_iterations")).to_contain_text("Not saved")
    with page.expect_event("dialog") as warning:
        page.click(".brand")

    assert warning.value.type == "beforeunload"
    expect(page).to_have_url(f"{live_server_url}/settings/")


def type_over(field: Any, text: str) -> None:
    """Select what the field holds and type `text` over it, key by key, as a person does."""
    field.press("ControlOrMeta+a")
    field.press_sequentially(text)


def stored(page: Any, live_server_url: str, name: str) -> Any:
    """What the server keeps for setting `name` (the API, in the page's session)."""
    return page.request.get(f"{live_server_url}/api/settings/").json()[name]


@pytest.mark.parametrize(
    ("typed", "error"),
    [
        ("0", "Must be between 1 and 50."),
        ("100000", "Must be between 1 and 50."),
        ("1e", "Must be a whole number."),  # "1", then no number at all
    ],
)
def test_a_value_out_of_bounds_does_not_move_the_slider(
    settings_page: Any, live_server_url: str, typed: str, error: str
):
    page = settings_page
    page.on("dialog", lambda dialog: dialog.accept())  # the reload leaves a refused value
    number = page.locator("#id_max_iterations")
    slider = page.locator("#setting-max_iterations .slider")
    number.fill("22")
    expect(page.locator("#status-max_iterations")).to_contain_text("Saved")
    expect(slider).to_have_value("22")

    type_over(number, typed)

    expect(page.locator("#status-max_iterations")).to_contain_text(error)
    expect(number).to_have_attribute("aria-invalid", "true")
    expect(slider).to_have_value("22")
    assert stored(page, live_server_url, "max_iterations") == 22
    page.reload()
    expect(number).to_have_value("22")
    expect(slider).to_have_value("22")


def test_the_slider_follows_a_value_within_bounds_again_after_an_error(settings_page: Any):
    page = settings_page
    number = page.locator("#id_max_iterations")
    slider = page.locator("#setting-max_iterations .slider")
    type_over(number, "500")
    expect(page.locator("#status-max_iterations")).to_contain_text("Must be between")

    type_over(number, "40")

    expect(slider).to_have_value("40")
    expect(page.locator("#status-max_iterations")).to_contain_text("Saved")
    expect(number).not_to_have_attribute("aria-invalid", "true")


@pytest.mark.parametrize("leave", ["reload", "close", "link"])
def test_leaving_with_a_refused_value_asks_first(
    settings_page: Any, live_server_url: str, leave: str
):
    page = settings_page
    dialogs: list[str] = []
    number = page.locator("#id_max_iterations")
    number.fill("22")
    expect(page.locator("#status-max_iterations")).to_contain_text("Saved")
    type_over(number, "0")
    expect(page.locator("#status-max_iterations")).to_contain_text("Must be between")

    if leave == "reload":  # the person chooses to leave: the refused value is dropped
        page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
        page.reload()
        expect(number).to_have_value("22")
    else:  # the person chooses to stay: the value is still there, to correct
        page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.dismiss()))
        with page.expect_event("dialog"):
            if leave == "close":
                page.close(run_before_unload=True)
            else:
                page.click(".brand")
        expect(page).to_have_url(f"{live_server_url}/settings/")
        expect(number).to_have_value("0")

    assert dialogs == ["beforeunload"]
    assert stored(page, live_server_url, "max_iterations") == 22


def test_leaving_with_a_value_out_of_bounds_not_yet_sent_asks_first(settings_page: Any):
    page = settings_page
    stop_the_clock(page)  # the value waits for its 400 ms: no answer has said it is refused
    page.on("dialog", lambda dialog: dialog.dismiss())

    type_over(page.locator("#id_token_budget"), "5")

    with page.expect_event("dialog") as warning:
        page.close(run_before_unload=True)
    assert warning.value.type == "beforeunload"


@pytest.mark.parametrize("leave", ["reload", "close"])
def test_leaving_asks_nothing_once_a_refused_value_is_corrected(
    settings_page: Any, live_server_url: str, leave: str
):
    page = settings_page
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    number = page.locator("#id_max_iterations")
    type_over(number, "0")
    expect(page.locator("#status-max_iterations")).to_contain_text("Must be between")

    type_over(number, "33")
    expect(page.locator("#status-max_iterations")).to_contain_text("Saved")
    if leave == "reload":
        page.reload()
        expect(number).to_have_value("33")
    else:
        with page.expect_event("close"):
            page.close(run_before_unload=True)

    assert dialogs == []
    assert stored(page, live_server_url, "max_iterations") == 33


@pytest.fixture(scope="module")
def models_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A live server whose operator allows three models and lists the default among them."""
    with serving_daphne(
        tmp_path_factory.mktemp("models-server"),
        DEBUG="True",
        ORACLE_MODEL=DEFAULT_MODEL,
        ORACLE_MODELS=",".join([DEFAULT_MODEL, *OTHER_MODELS, OTHER_MODELS[0]]),
    ) as server:
        yield server.url


# The width the select has, and the width it would take to show its longest option:
# a copy of it left to size itself (the browser's own "fits every option").
MEASURE_SELECT = """select => {
  const copy = select.cloneNode(true);
  copy.removeAttribute("id");
  copy.style.cssText = "position:absolute;visibility:hidden;width:auto;min-width:0;max-width:none";
  select.parentElement.append(copy);
  const needed = copy.getBoundingClientRect().width;
  copy.remove();
  return {needed: needed, width: select.getBoundingClientRect().width};
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_model_select_shows_each_model_once_and_in_full(
    page: Any, models_server: str, width: int
):
    page.set_viewport_size({"width": width, "height": 844})
    sign_up(page, models_server, f"model-user-{next(_users)}")
    page.goto(f"{models_server}/settings/")
    select = page.locator("#id_model")
    in_use = page.locator("#setting-model .model-in-use")

    texts = select.locator("option").all_inner_texts()
    assert len(texts) == len(set(texts))
    for model in [DEFAULT_MODEL, *OTHER_MODELS]:
        assert sum(model in text for text in texts) == 1, (model, texts)
    if width >= 1280:
        measured = select.evaluate(MEASURE_SELECT)
        assert measured["needed"] <= measured["width"], measured  # no option is cut off
    else:  # the closed select may cut a name off: the line under it gives it in full
        for value in select.evaluate("select => [...select.options].map(o => o.value)"):
            select.select_option(value)
            expect(in_use).to_be_visible()
            expect(in_use).to_contain_text(value or DEFAULT_MODEL)
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_screenshots_of_the_settings_page(page: Any, models_server: str, tmp_path: Path):
    sign_up(page, models_server, f"model-user-{next(_users)}")
    page.goto(f"{models_server}/settings/")
    type_over(page.locator("#id_max_iterations"), "100000")  # its error, its slider unmoved
    expect(page.locator("#status-max_iterations")).to_contain_text("Must be between")

    for folder, look in each_look(page, tmp_path):
        page.screenshot(path=str(folder / f"settings-{look}.png"), full_page=True)
        page.locator("#setting-max_iterations").screenshot(
            path=str(folder / f"settings-field-error-{look}.png")
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


def test_enter_saves_the_field_without_posting_the_whole_form(settings_page: Any):
    page = settings_page
    stop_the_clock(page)
    posts: list[str] = []
    page.on(
        "request", lambda request: posts.append(request.url) if request.method == "POST" else None
    )

    page.fill("#id_max_iterations", "26")
    page.press("#id_max_iterations", "Enter")

    expect(page.locator("#status-max_iterations")).to_contain_text("Saved")
    assert [url.removeprefix(page.url.removesuffix("/settings/")) for url in posts] == [
        "/settings/fields/max_iterations/"
    ]
