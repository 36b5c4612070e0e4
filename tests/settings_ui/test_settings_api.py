"""GET/PATCH /api/settings/: partial updates, field errors, and nothing saved on a bad value."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.services import api_token_create
from agents.config import AgentConfig
from tests.settings_ui.conftest import bound_cases, stored

URL = "/api/settings/"


def patch(client: Client, body: object, **headers: str):
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.patch(URL, data, content_type="application/json", headers=headers)


def test_it_answers_the_whole_config(alice_client: Client):
    response = alice_client.get(URL)

    assert response.status_code == 200
    assert response.json() == AgentConfig().to_dict()


def test_a_patch_changes_only_the_fields_sent(alice: User, alice_client: Client):
    response = patch(alice_client, {"max_iterations": 33, "limit_action": "pause"})

    assert response.status_code == 200
    assert response.json()["max_iterations"] == 33
    assert response.json()["limit_action"] == "pause"
    assert response.json()["token_budget"] == 50_000
    assert alice_client.get(URL).json() == response.json()
    assert stored(alice)["max_iterations"] == 33


def test_one_bad_field_answers_400_and_saves_nothing(alice: User, alice_client: Client):
    response = patch(
        alice_client,
        {"max_iterations": 20, "token_budget": 999, "limit_action": "explode", "colour": "red"},
    )

    assert response.status_code == 400
    assert response.json() == {
        "errors": {
            "token_budget": ["Must be between 1,000 and 200,000."],
            "limit_action": ["Must be one of: stop, pause, extend, warn."],
            "colour": ["Unknown setting."],
        }
    }
    assert stored(alice) == AgentConfig().to_dict()


@pytest.mark.parametrize(("spec", "value", "accepted"), bound_cases())
def test_it_keeps_every_bound(alice: User, alice_client: Client, spec, value, accepted):
    response = patch(alice_client, {spec.name: value})

    if accepted:
        assert response.status_code == 200
        assert stored(alice)[spec.name] == value
    else:
        assert response.status_code == 400
        assert list(response.json()["errors"]) == [spec.name]
        assert stored(alice)[spec.name] == spec.default


@pytest.mark.parametrize("value", ["fifteen", None, True, [15], {"n": 15}, 15.5, 10**400], ids=repr)
def test_it_refuses_what_is_not_a_whole_number(alice: User, alice_client: Client, value):
    response = patch(alice_client, {"max_iterations": value})

    assert response.status_code == 400
    assert "max_iterations" in response.json()["errors"]
    assert stored(alice)["max_iterations"] == 15


def test_a_huge_integer_cost_is_an_error_not_a_crash(alice: User, alice_client: Client):
    response = patch(alice_client, f'{{"max_cost_usd": {10**400}, "max_iterations": 2}}')

    assert response.status_code == 400
    assert response.json()["errors"] == {"max_cost_usd": ["Must be between 0.01 and 100.00."]}
    assert stored(alice)["max_iterations"] == 15


def test_unlimited_iterations_is_a_boolean(alice: User, alice_client: Client):
    assert patch(alice_client, {"unlimited_iterations": True}).json()["unlimited_iterations"]
    assert stored(alice)["unlimited_iterations"] is True
    assert patch(alice_client, {"unlimited_iterations": "maybe"}).status_code == 400
    assert stored(alice)["unlimited_iterations"] is True


@pytest.mark.parametrize("body", ["", "not json", "[1, 2]", '"max_iterations"', "[" * 100_000])
def test_a_body_that_is_not_a_json_object_is_a_400(alice_client: Client, body: str):
    response = patch(alice_client, body)

    assert response.status_code == 400
    assert "JSON object" in response.json()["error"]


def test_only_a_model_the_operator_allows_can_be_chosen(
    alice: User, alice_client: Client, two_models: list[str]
):
    assert patch(alice_client, {"model": "ollama/llama3"}).status_code == 200
    response = patch(alice_client, {"model": "openai/gpt-5-pro"})

    assert response.status_code == 400
    assert "allowed models" in response.json()["errors"]["model"][0]
    assert stored(alice)["model"] == "ollama/llama3"
    assert patch(alice_client, {"model": ""}).json()["model"] == ""  # the server default


def test_a_bearer_token_reads_and_changes_its_owners_settings(alice: User, bob: User):
    _, raw = api_token_create(user=bob, name="script")
    client = Client(enforce_csrf_checks=True)  # bearer requests need no CSRF token

    response = patch(client, {"max_parallel_tools": 5}, Authorization=f"Bearer {raw}")

    assert response.status_code == 200
    assert stored(bob)["max_parallel_tools"] == 5
    assert stored(alice)["max_parallel_tools"] == 3
    assert client.get(URL, headers={"Authorization": "Bearer nope"}).status_code == 401


def test_a_session_patch_needs_the_csrf_token(alice: User):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)

    response = patch(client, {"max_iterations": 9})

    assert response.status_code == 403
    assert stored(alice)["max_iterations"] == 15


def test_no_login_answers_401_and_other_methods_405(alice_client: Client, db: None):
    assert Client().get(URL).status_code == 401
    assert alice_client.post(URL, {}).status_code == 405
    assert alice_client.put(URL, "{}", content_type="application/json").status_code == 405
