"""How a config is stored: defaults on first use, the database refuses a bad value, the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.test import Client

from agents.config import FIELDS, AgentConfig, ConfigError, OperatorLimits
from settings_ui.models import AgentSettings
from settings_ui.services import (
    agent_config_for,
    agent_config_reset,
    agent_config_update,
    operator_limits,
)
from tests.settings_ui.conftest import NUMERIC


def test_a_new_account_has_the_defaults_stored(alice: User):
    assert AgentSettings.objects.get(user=alice).values() == AgentConfig().to_dict()
    assert agent_config_for(user=alice) == AgentConfig()
    assert AgentConfig().to_dict() == {spec.name: spec.default for spec in FIELDS}


def test_a_read_writes_nothing(alice: User):
    AgentSettings.objects.filter(user=alice).delete()  # an account from before rows came

    assert agent_config_for(user=alice) == AgentConfig()
    assert not AgentSettings.objects.filter(user=alice).exists()


def test_an_update_with_one_bad_value_raises_and_saves_nothing(alice: User):
    with pytest.raises(ConfigError) as raised:
        agent_config_update(user=alice, raw={"max_iterations": "20", "timeout_seconds": "5"})

    assert raised.value.errors == {"timeout_seconds": ["Must be between 10 and 600."]}
    assert agent_config_for(user=alice).max_iterations == 15


def test_an_update_and_a_reset(alice: User):
    config = agent_config_update(user=alice, raw={"max_iterations": "20", "limit_action": "warn"})

    assert (config.max_iterations, config.limit_action) == (20, "warn")
    assert agent_config_for(user=alice) == config
    assert agent_config_reset(user=alice) == AgentConfig()
    assert agent_config_for(user=alice) == AgentConfig()


@pytest.mark.parametrize("spec", NUMERIC, ids=lambda spec: spec.name)
def test_the_database_refuses_a_value_out_of_bounds(alice: User, spec):
    agent_config_for(user=alice)

    with pytest.raises(IntegrityError), transaction.atomic():
        AgentSettings.objects.filter(user=alice).update(**{spec.name: spec.max + 1})

    assert AgentSettings.objects.get(user=alice).values()[spec.name] == spec.default


def test_the_database_refuses_an_unknown_limit_action(alice: User):
    agent_config_for(user=alice)

    with pytest.raises(IntegrityError), transaction.atomic():
        AgentSettings.objects.filter(user=alice).update(limit_action="halt")


def test_the_stored_bounds_follow_agents_config(db: None):
    # A bound changed in agents/config.py without a new migration fails here.
    call_command("makemigrations", "settings_ui", "--check", "--dry-run", verbosity=0)


def test_a_model_the_operator_no_longer_allows_falls_back_to_the_server_default(
    alice: User, settings, two_models: list[str]
):
    agent_config_update(user=alice, raw={"model": "ollama/llama3"})
    settings.ORACLE_MODELS = ["openai/gpt-4o-mini"]

    assert agent_config_for(user=alice).model == ""


def test_operator_limits_come_from_settings(settings):
    settings.ORACLE_HARD_MAX_ITERATIONS = 80
    settings.ORACLE_HARD_MAX_COST_USD = 5.0

    limits = operator_limits()

    assert limits.max_iterations == 80
    assert limits.max_cost_usd == 5.0
    assert limits.token_budget == OperatorLimits().token_budget


def test_the_admin_edits_a_config_with_the_same_rules(alice: User, db: None):
    admin = User.objects.create_superuser("root", password="correct horse battery")
    client = Client()
    client.force_login(admin)
    row = AgentSettings.objects.get(user=alice)  # stored as her account was made
    url = f"/admin/settings_ui/agentsettings/{row.pk}/change/"
    form = {"user": alice.pk, **{spec.name: spec.default for spec in FIELDS}}
    form.pop("unlimited_iterations")

    page = client.get(url).content.decode()
    assert "there is none (the one call is the answer). 1\N{EN DASH}50; default 15." in page

    response = client.post(url, {**form, "max_iterations": 51, "token_budget": 500})
    assert response.status_code == 200
    body = response.content.decode()
    assert "Must be between 1 and 50." in body
    assert "Must be between 1,000 and 200,000." in body
    row.refresh_from_db()
    assert row.max_iterations == 15

    response = client.post(url, {**form, "max_iterations": 50})
    assert response.status_code == 302
    assert agent_config_for(user=alice).max_iterations == 50
