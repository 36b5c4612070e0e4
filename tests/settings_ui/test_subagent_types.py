"""The per-agent-type table: seeded, edited by operators in the admin under AgentConfig's
bounds, and what a run's `delegate` tool offers."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.test import Client

from runs.tools import run_tools
from settings_ui.models import AgentTypeLimits
from settings_ui.selectors import subagent_types

pytestmark = pytest.mark.django_db


def delegate_description() -> str:
    tools = run_tools(agent_types=subagent_types())
    (schema,) = [s for s in tools.schemas if s["function"]["name"] == "delegate"]
    return str(schema["function"]["description"])


def test_the_table_starts_with_a_researcher_and_a_summarizer() -> None:
    kinds = {kind.name: kind for kind in subagent_types()}

    assert set(kinds) == {"researcher", "summarizer"}
    assert kinds["researcher"].max_iterations == 30
    assert kinds["summarizer"].max_iterations == 5
    assert "researcher: Searches and reads the documents" in delegate_description()


def test_the_admin_keeps_agent_config_bounds_and_saves_nothing_out_of_them() -> None:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="correct horse battery"))
    row = AgentTypeLimits.objects.get(name="summarizer")
    url = f"/admin/settings_ui/agenttypelimits/{row.pk}/change/"
    form = {"name": "summarizer", "description": row.description, "enabled": "on",
            "max_iterations": 5, "timeout_seconds": 120, "token_budget": 20_000,
            "max_cost_usd": 0.5, "max_tool_calls_per_turn": 5}  # fmt: skip

    refused = client.post(url, {**form, "max_iterations": 51, "timeout_seconds": 5})

    assert refused.status_code == 200
    assert "Must be between 1 and 50." in refused.content.decode()
    assert "Must be between 10 and 600." in refused.content.decode()
    row.refresh_from_db()
    assert row.max_iterations == 5

    assert client.post(url, {**form, "max_iterations": 8}).status_code == 302
    (summarizer,) = [kind for kind in subagent_types() if kind.name == "summarizer"]
    assert summarizer.max_iterations == 8


def test_the_database_refuses_an_out_of_bounds_figure_whoever_writes_it() -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        AgentTypeLimits.objects.filter(name="researcher").update(max_cost_usd=500)


def test_a_disabled_type_is_not_offered() -> None:
    AgentTypeLimits.objects.filter(name="summarizer").update(enabled=False)

    assert [kind.name for kind in subagent_types()] == ["researcher"]
    assert "summarizer" not in delegate_description()
