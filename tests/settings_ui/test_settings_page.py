"""The settings page: stored values on load, per-field autosave, inline errors, no-JS post."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.config import FIELDS
from tests.settings_ui.conftest import bound_cases, stored


def field_url(name: str) -> str:
    return f"/settings/fields/{name}/"


def input_value(html: str, name: str) -> str:
    match = re.search(rf'<input type="number" id="id_{name}" name="{name}" value="([^"]*)"', html)
    assert match, f"no number input for {name}"
    return match.group(1)


def test_it_shows_every_field_with_its_stored_value_and_bounds(alice_client: Client):
    html = alice_client.get("/settings/").content.decode()

    for spec in FIELDS:
        assert f'name="{spec.name}"' in html, spec.name
        assert spec.label in html
    assert input_value(html, "max_iterations") == "15"
    assert "there is none (the one call is the answer). 1\N{EN DASH}50; default 15." in html
    assert "1,000\N{EN DASH}200,000; default 50,000." in html
    assert "0.01\N{EN DASH}100.00; default 1.00." in html
    assert "(The hard cap is 200 iterations.)" in html
    assert "Save settings" in html  # shown only without JavaScript
    assert html.count('type="range"') == len([s for s in FIELDS if s.kind in ("int", "float")])


def test_it_saves_one_field_and_says_saved(alice: User, alice_client: Client):
    response = alice_client.post(field_url("max_iterations"), {"max_iterations": "20"})

    assert response.status_code == 200
    assert "Saved" in response.content.decode()
    assert stored(alice)["max_iterations"] == 20
    assert input_value(alice_client.get("/settings/").content.decode(), "max_iterations") == "20"


@pytest.mark.parametrize(("spec", "value", "accepted"), bound_cases())
def test_it_keeps_every_bound_on_the_page(alice: User, alice_client: Client, spec, value, accepted):
    before = stored(alice)[spec.name]

    response = alice_client.post(field_url(spec.name), {spec.name: str(value)})

    body = response.content.decode()
    if accepted:
        assert response.status_code == 200 and "Saved" in body
        assert stored(alice)[spec.name] == value
    else:
        assert response.status_code == 400
        assert "Must be between" in body and "Saved" not in body
        assert stored(alice)[spec.name] == before


@pytest.mark.parametrize("text", ["abc", "", "12abc", "1.5", "NaN", "1e3"])
def test_it_refuses_what_is_not_a_whole_number(alice: User, alice_client: Client, text: str):
    response = alice_client.post(field_url("max_iterations"), {"max_iterations": text})

    assert response.status_code == 400
    assert "Must be a whole number." in response.content.decode()
    assert stored(alice)["max_iterations"] == 15


@pytest.mark.parametrize("text", ["cheap", "inf", "nan", ""])
def test_it_refuses_a_cost_that_is_not_a_number(alice: User, alice_client: Client, text: str):
    response = alice_client.post(field_url("max_cost_usd"), {"max_cost_usd": text})

    assert response.status_code == 400
    assert "Must be a number." in response.content.decode()
    assert stored(alice)["max_cost_usd"] == 1.0


def test_the_unlimited_checkbox_turns_on_and_off(alice: User, alice_client: Client):
    alice_client.post(field_url("unlimited_iterations"), {"unlimited_iterations": "true"})
    assert stored(alice)["unlimited_iterations"] is True
    html = alice_client.get("/settings/").content.decode()
    assert re.search(r'id="id_unlimited_iterations"[^>]*checked', html)
    assert "Not used while <em>Unlimited iterations</em> is on." in html

    # An unchecked checkbox sends nothing.
    response = alice_client.post(field_url("unlimited_iterations"), {})
    assert response.status_code == 200
    assert stored(alice)["unlimited_iterations"] is False


def test_the_limit_action_is_a_select_with_a_sentence_for_each_action(
    alice: User, alice_client: Client
):
    html = alice_client.get("/settings/").content.decode()
    for action in ("stop", "pause", "extend", "warn"):
        assert f'<option value="{action}"' in html
        assert f'data-action="{action}"' in html
    assert '<option value="stop" selected>' in html
    # The extend fields are marked so the page shows them only for `extend`.
    assert re.search(
        r'class="setting setting-number extend-only"\s+id="setting-extend_multiplier"', html
    )

    alice_client.post(field_url("limit_action"), {"limit_action": "extend"})
    assert stored(alice)["limit_action"] == "extend"
    assert '<option value="extend" selected>' in alice_client.get("/settings/").content.decode()

    response = alice_client.post(field_url("limit_action"), {"limit_action": "explode"})
    assert response.status_code == 400
    assert "Must be one of: stop, pause, extend, warn." in response.content.decode()
    assert stored(alice)["limit_action"] == "extend"


def test_an_unknown_field_is_not_found(alice_client: Client):
    assert alice_client.post(field_url("is_superuser"), {"is_superuser": "1"}).status_code == 404


def test_the_plain_form_saves_every_field_at_once(alice: User, alice_client: Client):
    form = {spec.name: str(spec.default) for spec in FIELDS if spec.kind != "bool"}
    form.update(max_iterations="25", token_budget="9000", unlimited_iterations="true")

    response = alice_client.post("/settings/", form, follow=True)

    assert response.redirect_chain == [("/settings/", 302)]
    assert "Settings saved." in response.content.decode()
    values = stored(alice)
    assert (values["max_iterations"], values["token_budget"]) == (25, 9000)
    assert values["unlimited_iterations"] is True


def test_the_plain_form_saves_nothing_when_one_field_is_bad_and_keeps_the_text(
    alice: User, alice_client: Client
):
    form = {spec.name: str(spec.default) for spec in FIELDS if spec.kind != "bool"}
    form.update(max_iterations="30", token_budget="lots")

    response = alice_client.post("/settings/", form)

    html = response.content.decode()
    assert response.status_code == 400
    assert "Nothing was saved" in html
    assert "Must be a whole number." in html
    assert input_value(html, "token_budget") == "lots"  # the user's text, to correct
    assert input_value(html, "max_iterations") == "30"
    assert stored(alice)["max_iterations"] == 15


def test_reset_puts_every_field_back_to_its_default(alice: User, alice_client: Client):
    alice_client.post(field_url("max_iterations"), {"max_iterations": "40"})
    alice_client.post(field_url("limit_action"), {"limit_action": "warn"})

    response = alice_client.post("/settings/reset/", follow=True)

    assert "Every setting is back to its default." in response.content.decode()
    assert stored(alice) == {spec.name: spec.default for spec in FIELDS}
    assert "Reset all settings" in response.content.decode()  # behind a <details> to confirm


def test_settings_persist_across_log_in_sessions(alice: User):
    first = Client()
    assert first.login(username="alice", password="correct horse battery")
    first.post(field_url("timeout_seconds"), {"timeout_seconds": "300"})
    first.post("/logout/")

    second = Client()
    assert second.login(username="alice", password="correct horse battery")
    html = second.get("/settings/").content.decode()

    assert input_value(html, "timeout_seconds") == "300"


def test_each_user_sees_and_changes_only_their_own_settings(
    alice: User, bob: User, alice_client: Client, bob_client: Client
):
    alice_client.post(field_url("max_iterations"), {"max_iterations": "42"})

    assert input_value(bob_client.get("/settings/").content.decode(), "max_iterations") == "15"
    bob_client.post(field_url("max_iterations"), {"max_iterations": "7"})
    assert stored(alice)["max_iterations"] == 42
    assert stored(bob)["max_iterations"] == 7


def test_saving_needs_the_csrf_token(alice: User):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)

    assert client.post(field_url("max_iterations"), {"max_iterations": "9"}).status_code == 403
    assert client.post("/settings/", {"max_iterations": "9"}).status_code == 403
    assert client.post("/settings/reset/").status_code == 403
    assert stored(alice)["max_iterations"] == 15

    html = client.get("/settings/").content.decode()
    token = re.search(r'"X-CSRFToken": "([^"]+)"', html).group(1)
    response = client.post(
        field_url("max_iterations"), {"max_iterations": "9"}, headers={"X-CSRFToken": token}
    )
    assert response.status_code == 200
    assert stored(alice)["max_iterations"] == 9


def test_a_visitor_who_is_not_logged_in_is_sent_to_log_in(db: None):
    for url in ("/settings/", field_url("max_iterations")):
        response = Client().get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def model_options(html: str) -> list[tuple[str, str, bool]]:
    """(value, text, selected) of each option of the model select."""
    select = re.search(r'<select id="id_model".*?</select>', html, re.DOTALL)
    assert select, "no model select"
    return [
        (value, text, bool(selected))
        for value, selected, text in re.findall(
            r'<option value="([^"]*)"( selected)?>([^<]*)</option>', select.group(0)
        )
    ]


def test_it_lists_each_model_once_in_the_operators_order(alice_client: Client, settings):
    settings.ORACLE_MODEL = "openai/gpt-4o-mini"
    settings.ORACLE_MODELS = ["openai/gpt-4o-mini", "ollama/llama3", "openai/o3", "ollama/llama3"]

    options = model_options(alice_client.get("/settings/").content.decode())

    assert [(value, text) for value, text, _ in options] == [
        ("", "Server default (openai/gpt-4o-mini)"),
        ("ollama/llama3", "ollama/llama3"),
        ("openai/o3", "openai/o3"),
    ]
    assert [value for value, _, selected in options if selected] == [""]


def test_a_stored_choice_of_the_default_model_shows_as_the_server_default(
    alice: User, alice_client: Client, two_models: list[str]
):
    response = alice_client.post(field_url("model"), {"model": "openai/gpt-4o-mini"})
    assert response.status_code == 200  # still allowed (the API and the CLI may name it)

    options = model_options(alice_client.get("/settings/").content.decode())

    assert [text for _, text, selected in options if selected] == [
        "Server default (openai/gpt-4o-mini)"
    ]
    assert sum("openai/gpt-4o-mini" in text for _, text, _ in options) == 1
