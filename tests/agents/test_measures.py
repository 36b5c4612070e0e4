"""What is measured of a round against its limits: the quantities, the warning point,
the headroom of the next call."""

from __future__ import annotations

import pytest

from agents.config import AgentConfig, LimitAction, OperatorLimits
from agents.measures import (
    Measure,
    headroom,
    iteration_ceiling,
    limit_hit,
    round_measures,
    warning_threshold,
)
from agents.state import AgentState, Metric


def measures_of(
    state: AgentState, config: AgentConfig, operator: OperatorLimits | None = None
) -> dict[Metric, Measure]:
    operator = operator or OperatorLimits()
    return round_measures(config, operator, state, iteration_ceiling(config, operator, state))


def test_it_ends_the_round_at_the_users_iteration_limit_under_the_operators_cap() -> None:
    state = AgentState("r")
    assert iteration_ceiling(AgentConfig(max_iterations=15), OperatorLimits(), state) == 15
    small_cap = OperatorLimits(max_iterations=10)
    assert iteration_ceiling(AgentConfig(max_iterations=15), small_cap, state) == 10


def test_under_warn_only_the_operators_caps_end_the_run() -> None:
    config = AgentConfig(max_iterations=15, token_budget=1_000, limit_action=LimitAction.WARN)
    operator = OperatorLimits(max_iterations=200, token_budget=5_000)
    measures = measures_of(AgentState("r"), config, operator)
    assert (measures[Metric.ITERATIONS].shown_limit, measures[Metric.ITERATIONS].hard_limit) == (
        15,
        200,
    )
    tokens = measures[Metric.TOKENS]
    assert (tokens.shown_limit, tokens.hard_limit, tokens.is_operator_cap) == (1_000, 5_000, True)


def test_tokens_count_the_next_calls_estimate_as_reached() -> None:
    state = AgentState("r", estimated_prompt_tokens=400)
    state.add_usage(prompt_tokens=700, completion_tokens=0, cost_usd=0.0)
    tokens = measures_of(state, AgentConfig(token_budget=1_000))[Metric.TOKENS]
    assert (tokens.value, tokens.projected) == (700, 1_100)
    assert tokens.reached  # the next call would cross the budget
    hit = limit_hit(tokens, projected=True)
    assert (hit.value, hit.limit, hit.projected) == (700, 1_000, True)


def test_a_sum_of_seconds_landing_a_hair_short_counts_as_reached() -> None:
    state = AgentState("r")
    state.round.elapsed_s = sum([0.1] * 1200)  # 119.99999999999..., not 120
    assert state.round.elapsed_s < 120
    assert measures_of(state, AgentConfig(timeout_seconds=120))[Metric.TIME].reached


@pytest.mark.parametrize(
    ("limit", "at"),
    [(15, 10.5), (5, 3.0), (3, 1.0), (2, 1.0), (1, 1.0)],
)
def test_iterations_are_warned_about_two_ahead_at_the_latest(limit: int, at: float) -> None:
    config = AgentConfig(max_iterations=limit, soft_warning_percent=70)
    iterations = measures_of(AgentState("r"), config)[Metric.ITERATIONS]
    assert warning_threshold(iterations) == at


def test_other_quantities_are_warned_about_at_their_percentage() -> None:
    config = AgentConfig(token_budget=50_000, token_warning_percent=80, max_cost_usd=2.0)
    measures = measures_of(AgentState("r"), config)
    assert warning_threshold(measures[Metric.TOKENS]) == 40_000
    assert warning_threshold(measures[Metric.COST]) == pytest.approx(1.4)


def test_the_next_call_may_spend_what_is_left_of_each_limit() -> None:
    state = AgentState("r")
    state.add_usage(prompt_tokens=300, completion_tokens=200, cost_usd=0.25)
    state.round.elapsed_s, state.round.tool_calls = 20.0, 4
    config = AgentConfig(
        token_budget=1_000, timeout_seconds=120, max_cost_usd=1.0, max_tool_calls_per_turn=10
    )
    limits = headroom(state, measures_of(state, config))
    assert (limits.seconds, limits.tokens, limits.cost_usd, limits.tool_calls) == (
        100.0,
        500,
        0.75,
        6,
    )
