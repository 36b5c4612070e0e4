"""Custom instructions: one text per user, edited on the settings page and through the
API under one bound (4,000 characters); too long is refused and changes nothing."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.test import Client

from settings_ui.models import AgentSettings
from tests.settings_ui.conftest import stored

URL = "/api/settings/"
FIELD_URL = "/settings/fields/custom_instructions/"
INSTRUCTIONS = "Answer in French.\nI am a vet: skip the basics."
TOO_LONG = "x" * 4001
TOO_LONG_MESSAGE = "Must be at most 4,000 characters (this is 4,001)."


def patch(client: Client, body: object):
    return client.patch(URL, json.dumps(body), content_type="application/json")


def textarea(page: str) -> str:
    match = re.search(
        r'<textarea id="id_custom_instructions" name="custom_instructions"[^>]*>(.*?)</textarea>',
        page,
        re.S,
    )
    assert match, "no textarea for the custom instructions"
    return html.unescape(match.group(1)).removeprefix("\n")


def test_the_api_shows_them_and_a_patch_sets_them(alice: User, alice_client: Client):
    assert alice_client.get(URL).json()["custom_instructions"] == ""

    response = patch(alice_client, {"custom_instructions": INSTRUCTIONS})

    assert response.status_code == 200
    assert response.json()["custom_instructions"] == INSTRUCTIONS
    assert alice_client.get(URL).json()["custom_instructions"] == INSTRUCTIONS
    assert stored(alice)["custom_instructions"] == INSTRUCTIONS


def test_the_api_refuses_instructions_too_long_and_saves_nothing(alice: User, alice_client: Client):
    patch(alice_client, {"custom_instructions": INSTRUCTIONS})

    response = patch(alice_client, {"custom_instructions": TOO_LONG, "max_iterations": 20})

    assert response.status_code == 400
    assert response.json() == {"errors": {"custom_instructions": [TOO_LONG_MESSAGE]}}
    assert stored(alice)["custom_instructions"] == INSTRUCTIONS
    assert stored(alice)["max_iterations"] == 15


@pytest.mark.parametrize("value", [42, ["Be brief."], {"text": "Be brief."}, True], ids=repr)
def test_the_api_refuses_instructions_that_are_not_text(alice: User, alice_client: Client, value):
    response = patch(alice_client, {"custom_instructions": value})

    assert response.status_code == 400
    assert response.json()["errors"] == {"custom_instructions": ["Must be text."]}
    assert stored(alice)["custom_instructions"] == ""


def test_blank_instructions_mean_none(alice: User, alice_client: Client):
    patch(alice_client, {"custom_instructions": INSTRUCTIONS})

    assert patch(alice_client, {"custom_instructions": "  \n  "}).status_code == 200
    assert stored(alice)["custom_instructions"] == ""
    assert patch(alice_client, {"custom_instructions": None}).status_code == 200


def test_the_page_has_a_textarea_in_a_section_of_its_own(alice_client: Client):
    alice_client.post(FIELD_URL, {"custom_instructions": INSTRUCTIONS})

    page = alice_client.get("/settings/").content.decode()

    assert textarea(page) == INSTRUCTIONS
    assert "<legend>Custom instructions</legend>" in page
    assert "Up to 4,000 characters." in page
    assert 'href="#setting-custom_instructions"' in page  # the sections' menu leads there


def test_the_page_saves_them_as_it_saves_any_field(alice: User, alice_client: Client):
    response = alice_client.post(FIELD_URL, {"custom_instructions": "Be brief.\r\nUse SI units."})

    assert response.status_code == 200
    assert "Saved" in response.content.decode()
    assert stored(alice)["custom_instructions"] == "Be brief.\nUse SI units."


def test_the_page_refuses_instructions_too_long_and_keeps_the_stored_ones(
    alice: User, alice_client: Client
):
    alice_client.post(FIELD_URL, {"custom_instructions": INSTRUCTIONS})

    response = alice_client.post(FIELD_URL, {"custom_instructions": TOO_LONG})

    assert response.status_code == 400
    assert TOO_LONG_MESSAGE in response.content.decode()
    assert stored(alice)["custom_instructions"] == INSTRUCTIONS


def test_the_plain_form_keeps_too_long_instructions_to_correct_and_saves_nothing(
    alice: User, alice_client: Client
):
    response = alice_client.post(
        "/settings/", {"max_iterations": "30", "custom_instructions": TOO_LONG}
    )

    page = response.content.decode()
    assert response.status_code == 400
    assert "Nothing was saved" in page and TOO_LONG_MESSAGE in page
    assert textarea(page) == TOO_LONG
    assert stored(alice)["max_iterations"] == 15
    assert stored(alice)["custom_instructions"] == ""


def test_each_user_has_their_own(alice: User, bob: User, alice_client: Client):
    patch(alice_client, {"custom_instructions": INSTRUCTIONS})

    assert stored(bob)["custom_instructions"] == ""


def test_the_database_refuses_instructions_too_long(alice: User):
    with pytest.raises(IntegrityError), transaction.atomic():
        AgentSettings.objects.filter(user=alice).update(custom_instructions=TOO_LONG)

    assert stored(alice)["custom_instructions"] == ""


def test_reset_clears_them(alice: User, alice_client: Client):
    patch(alice_client, {"custom_instructions": INSTRUCTIONS})

    page = alice_client.get("/settings/").content.decode()
    assert "your custom instructions are cleared" in page  # Reset says so before

    alice_client.post("/settings/reset/")

    assert stored(alice)["custom_instructions"] == ""
