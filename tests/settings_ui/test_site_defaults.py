"""The site's defaults (what new users start with): staff edit them in the admin, and
Reset on the settings page puts them back, saying so in each field's help."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.config import AgentConfig
from settings_ui.models import SiteDefaults
from tests.settings_ui.conftest import stored

pytestmark = pytest.mark.django_db
ADMIN = "/admin/settings_ui/sitedefaults/"


def test_staff_set_the_site_defaults_in_the_admin_and_bad_values_change_nothing(
    admin_client: Client,
) -> None:
    assert admin_client.get(ADMIN).status_code == 200
    added = admin_client.post(f"{ADMIN}add/", {"max_iterations": "22", "token_budget": "60000"})
    refused = admin_client.post(f"{ADMIN}1/change/", {"max_iterations": "0",
                                                      "token_budget": "60000"})  # fmt: skip
    second = admin_client.get(f"{ADMIN}add/")

    assert added.status_code == 302
    assert refused.status_code == 200  # the form again, with the error
    assert "max_iterations" in refused.content.decode()
    assert (SiteDefaults.config().max_iterations, SiteDefaults.config().token_budget) == (
        22,
        60_000,
    )
    assert second.status_code == 403  # one row: change it, do not add another


def test_reset_puts_back_the_sites_defaults_and_the_help_says_them(
    alice: User, alice_client: Client
) -> None:
    SiteDefaults.objects.create(pk=1, max_iterations=22, token_budget=60_000)
    alice_client.post("/settings/fields/max_iterations/", {"max_iterations": "40"})
    assert stored(alice)["max_iterations"] == 40

    alice_client.post("/settings/reset/")
    page = alice_client.get("/settings/").content.decode()

    assert stored(alice)["max_iterations"] == 22
    assert stored(alice)["token_budget"] == 60_000
    assert stored(alice)["limit_action"] == AgentConfig().limit_action  # no site default
    assert "default 22." in page
    assert "default 60,000." in page
