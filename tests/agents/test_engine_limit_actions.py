"""Limit actions (stop, pause, extend, warn), Continue, unlimited iterations and the hard cap."""

from __future__ import annotations

from agents.config import AgentConfig, OperatorLimits
from agents.events import EventCollector
from agents.loop import RunDeps, continue_run, resume_run, stop_paused_run
from agents.state import AgentState, LimitHit, Metric, RunStatus, TerminationReason, Usage
from agents.testing.scripted import tool_loop
from agents.tree import GO, DefaultDecisionTree, Stop

LOOKUP_FOREVER = tool_loop("lookup", lambda i: {"topic": f"topic {i}"})


def deps_with(outcome, **config) -> RunDeps:
    tree = DefaultDecisionTree(AgentConfig.from_raw(config))
    return RunDeps(model=outcome.model, tree=tree, tools=outcome.deps.tools)


async def test_pause_saves_the_run_at_the_limit_without_a_wind_down(run):
    outcome = await run(LOOKUP_FOREVER, max_iterations=3, limit_action="pause")

    assert outcome.result.status is RunStatus.PAUSED
    assert outcome.reason == "max_iterations"
    assert all(call.tools for call in outcome.model.calls)
    assert outcome.events.types()[-2:] == ["system.notice", "run.paused"]
    assert "Continue" in outcome.notices()[-1]["text"]
    assert outcome.events.of_type("run.finished") == []


async def test_a_paused_run_continues_from_json_with_fresh_round_counters(run):
    outcome = await run(LOOKUP_FOREVER, max_iterations=3, limit_action="pause")
    saved = outcome.result.state.to_json()
    messages_before = len(outcome.result.state.messages)

    state = AgentState.from_json(saved)
    events = EventCollector()
    result = await continue_run(
        state, deps_with(outcome, max_iterations=2, limit_action="pause"), on_event=events
    )

    assert events.types()[0] == "run.resumed"
    assert events.events[0]["seq"] > outcome.events.events[-1]["seq"]
    assert result.status is RunStatus.PAUSED
    assert state.round.iterations == 2  # a fresh round under the current settings
    assert state.total.iterations == 5  # the totals keep counting
    # No user message was added when continuing.
    new_messages = state.messages[messages_before:]
    assert [m["role"] for m in new_messages if m["role"] == "user"] == []


async def test_stopping_a_paused_run_ends_it_with_the_limits_reason(run):
    outcome = await run(LOOKUP_FOREVER, max_iterations=3, limit_action="pause")
    state = AgentState.from_json(outcome.result.state.to_json())
    events = EventCollector()

    result = await stop_paused_run(state, outcome.deps, on_event=events)

    assert result.status is RunStatus.FINISHED
    assert result.reason.value == "max_iterations"
    assert events.of_type("run.finished")[0]["reason"] == "max_iterations"
    assert result.final_text.startswith("Stopped: reached the iteration limit (3 of 3).")


async def test_continue_after_a_stop_adds_no_user_message_and_keeps_the_totals(run):
    outcome = await run(LOOKUP_FOREVER, max_iterations=2)
    state = outcome.result.state
    users_before = sum(1 for m in state.messages if m["role"] == "user")

    events = EventCollector()
    result = await continue_run(state, deps_with(outcome, max_iterations=2), on_event=events)

    assert result.reason.value == "max_iterations"
    assert sum(1 for m in state.messages if m["role"] == "user") == users_before
    assert events.of_type("run.finished")[0]["iterations"] == 4
    assert state.round.iterations == 2


async def test_extend_raises_the_ceiling_then_ends_with_turn_budget_exhausted(run):
    outcome = await run(
        LOOKUP_FOREVER, max_iterations=2, limit_action="extend", extend_multiplier=3
    )

    (extended,) = outcome.events.of_type("budget.extended")
    assert (extended["from"], extended["to"]) == (2, 6)
    assert any("raised it to 6" in n["text"] for n in outcome.notices())
    assert outcome.reason == "turn_budget_exhausted"
    assert outcome.finished["iterations"] == 6
    assert outcome.model.calls[1].tools is not None  # no wind-down before the extension
    assert outcome.model.calls[5].tools is None  # wind-down at the extended ceiling
    assert outcome.finished["failure_class"] == "deterministic"


async def test_extend_can_happen_several_times(run):
    outcome = await run(
        LOOKUP_FOREVER,
        max_iterations=1,
        limit_action="extend",
        extend_multiplier=2,
        max_extensions=3,
        no_progress_repeats=10,
    )

    extended = [(e["from"], e["to"]) for e in outcome.events.of_type("budget.extended")]
    assert extended == [(1, 2), (2, 4), (4, 8)]
    assert outcome.finished["iterations"] == 8


async def test_warn_shows_a_warning_and_goes_on_until_the_operators_cap(run):
    outcome = await run(
        LOOKUP_FOREVER,
        max_iterations=3,
        limit_action="warn",
        max_tool_calls_per_turn=100,
        operator=OperatorLimits(max_iterations=6),
    )

    texts = [n["text"] for n in outcome.notices()]
    assert any(t.startswith("Reached the iteration limit (3 of 3). Going on") for t in texts)
    assert outcome.reason == "max_iterations"
    assert outcome.finished["iterations"] == 6
    assert outcome.model.calls[5].tools is None


async def test_unlimited_iterations_run_until_the_hard_cap(run):
    outcome = await run(
        LOOKUP_FOREVER,
        unlimited_iterations=True,
        max_tool_calls_per_turn=100,
        operator=OperatorLimits(max_iterations=40),
    )

    assert outcome.reason == "max_iterations"
    assert outcome.finished["iterations"] == 40
    assert "(40 of 40)" in outcome.result.final_text


async def test_the_default_hard_cap_is_200_iterations(run):
    outcome = await run(
        LOOKUP_FOREVER, unlimited_iterations=True, limit_action="warn", no_progress_repeats=10
    )

    assert outcome.reason == "max_iterations"
    assert outcome.finished["iterations"] == 200


async def test_switching_from_unlimited_to_a_number_restarts_the_round_count(run):
    outcome = await run(
        LOOKUP_FOREVER, unlimited_iterations=True, max_tool_calls_per_turn=5, limit_action="pause"
    )
    assert outcome.reason == "tool_budget" and outcome.result.status is RunStatus.PAUSED
    state = AgentState.from_json(outcome.result.state.to_json())
    assert state.round.iterations == 5
    state.status = RunStatus.RUNNING  # picked up in the same round, e.g. after a lost worker

    result = await resume_run(
        state, deps_with(outcome, max_iterations=3, max_tool_calls_per_turn=50)
    )

    assert result.reason.value == "max_iterations"
    assert state.round.iterations == 3  # counted from 0 again, not from 5
    assert state.total.iterations == 8


async def test_the_state_round_trips_through_json(run):
    outcome = await run(LOOKUP_FOREVER, max_iterations=4, limit_action="pause")
    state = outcome.result.state
    state.extension("deep_research")["sources"] = ["a", "b"]

    again = AgentState.from_json(state.to_json())

    assert again == state
    assert again.extension("deep_research") == {"sources": ["a", "b"]}


def test_a_subagents_usage_counts_toward_the_token_budget():
    state = AgentState(run_id="r")
    tree = DefaultDecisionTree(AgentConfig(token_budget=1_000))
    assert tree.should_continue(state) == GO

    state.add_child_usage(Usage(prompt_tokens=900, completion_tokens=200, cost_usd=0.01))

    assert tree.should_continue(state) == Stop(
        TerminationReason.TOKEN_BUDGET, LimitHit(Metric.TOKENS, 1_100, 1_000)
    )
    assert state.limit_hit is None  # deciding changed nothing
    assert state.total.cost_usd == 0.01
