"""Runs take the user's settings when they start, and again when they continue.

The settings come through `runs.engine.user_config`, the function the chat's
run task calls; the model is the scripted fake, which calls a tool forever.
"""

from __future__ import annotations

import asyncio

from django.contrib.auth.models import User
from django.test import Client

from agents.builtin_tools import builtin_tools
from agents.loop import RunDeps, RunResult, continue_run, start_run
from agents.state import AgentState, RunStatus
from agents.testing.scripted import ScriptedModel, tool_loop
from agents.tree import create_tree
from runs.engine import user_config

CALCULATE_FOREVER = tool_loop("calculator", lambda i: {"expression": f"{i} + 1"})


def deps_for(user: User) -> RunDeps:
    config, operator = user_config(user)
    return RunDeps(
        model=ScriptedModel(CALCULATE_FOREVER),
        tree=create_tree("default", config, operator),
        tools=builtin_tools(),
    )


def start(user: User) -> RunResult:
    return asyncio.run(start_run("Count for me.", deps_for(user)))


def proceed(user: User, state: AgentState) -> RunResult:
    return asyncio.run(continue_run(state, deps_for(user)))


def save(client: Client, name: str, value: str) -> None:
    response = client.post(f"/settings/fields/{name}/", {name: value})
    assert response.status_code == 200, response.content


def test_a_run_started_after_a_change_stops_at_the_new_iteration_limit(
    alice: User, alice_client: Client
):
    assert start(alice).state.total.iterations == 15  # the default

    save(alice_client, "max_iterations", "4")
    result = start(alice)

    assert result.reason == "max_iterations"
    assert result.state.total.iterations == 4
    assert "reached the iteration limit (4 of 4)" in result.final_text


def test_a_paused_run_continues_under_the_current_settings(alice: User, alice_client: Client):
    save(alice_client, "limit_action", "pause")
    save(alice_client, "max_iterations", "3")
    paused = start(alice)
    assert paused.status is RunStatus.PAUSED
    assert paused.state.round.iterations == 3

    save(alice_client, "max_iterations", "5")
    save(alice_client, "limit_action", "stop")
    result = proceed(alice, paused.state)

    assert result.reason == "max_iterations"
    assert result.state.round.iterations == 5  # a fresh round under the new limit
    assert result.state.total.iterations == 8


def test_switching_from_unlimited_to_a_number_counts_the_round_from_zero(
    alice: User, alice_client: Client
):
    save(alice_client, "unlimited_iterations", "true")
    save(alice_client, "limit_action", "pause")
    save(alice_client, "token_budget", "1000")  # the fake spends 60 tokens a call
    paused = start(alice)
    assert paused.reason == "token_budget"
    assert paused.state.round.iterations > 6  # past the new limit below

    save(alice_client, "unlimited_iterations", "")
    save(alice_client, "max_iterations", "6")
    save(alice_client, "token_budget", "200000")
    result = proceed(alice, paused.state)

    assert result.reason == "max_iterations"
    assert result.state.round.iterations == 6
