"""What a run is told as a limit nears or passes: once per round and quantity, with
the model asked to wrap up only when the run will end at the limit."""

from __future__ import annotations

from agents.config import AgentConfig, LimitAction, OperatorLimits
from agents.limit_warnings import give_warning, warn_past_limit
from agents.measures import Measure, iteration_ceiling, round_measures
from agents.state import AgentState, Metric, TerminationReason


def iterations(state: AgentState, config: AgentConfig) -> Measure:
    operator = OperatorLimits()
    ceiling = iteration_ceiling(config, operator, state)
    return round_measures(config, operator, state, ceiling)[Metric.ITERATIONS]


def test_a_warning_at_a_limit_that_ends_the_run_asks_the_model_to_wrap_up() -> None:
    state = AgentState("r")
    state.round.iterations = 11
    give_warning(state, iterations(state, AgentConfig(max_iterations=15)), 11, then="")
    [notice] = state.pending_notices
    assert notice.text == (
        "Approaching the iteration limit (11 of 15). The Oracle has been asked to wrap up."
    )
    [hint] = state.pending_hints
    assert "Start wrapping up" in hint


def test_a_warning_at_a_limit_that_pauses_says_so_and_gives_no_hint() -> None:
    state = AgentState("r")
    state.round.iterations = 11
    then = "At the limit the run will pause."
    give_warning(state, iterations(state, AgentConfig(max_iterations=15)), 11, then=then)
    [notice] = state.pending_notices
    assert notice.text.endswith(then)
    assert state.pending_hints == []


def test_a_quantity_is_warned_about_once_a_round() -> None:
    state = AgentState("r")
    state.round.iterations = 11
    measure = iterations(state, AgentConfig(max_iterations=15))
    give_warning(state, measure, 11, then="")
    give_warning(state, measure, 12, then="")
    assert len(state.pending_notices) == 1


def test_a_step_past_the_warning_and_the_limit_at_once_is_said_as_reached() -> None:
    state = AgentState("r")
    state.round.iterations = 15
    measure = iterations(state, AgentConfig(max_iterations=15))
    give_warning(state, measure, 15, then="", reached=True)
    assert state.pending_notices[0].text.startswith("Reached the iteration limit (15 of 15)")


def test_under_warn_passing_the_users_limit_is_told_once_with_the_hard_cap() -> None:
    state = AgentState("r")
    config = AgentConfig(max_iterations=15, limit_action=LimitAction.WARN)
    state.round.iterations = 14
    warn_past_limit(state, iterations(state, config))
    assert state.pending_notices == []  # not past it yet
    state.round.iterations = 15
    warn_past_limit(state, iterations(state, config))
    state.round.iterations = 16
    warn_past_limit(state, iterations(state, config))
    [notice] = state.pending_notices
    assert notice.text == (
        "Reached the iteration limit (15 of 15). Going on because the limit action is warn; "
        "the hard cap is 200."
    )


def test_a_warning_on_the_next_calls_estimate_says_that_estimate_not_0_of_the_limit() -> None:
    state = AgentState("r")
    tokens = Measure(Metric.TOKENS, 0, 9_000, 10_000, 10_000, 80,
                     TerminationReason.TOKEN_BUDGET)  # fmt: skip

    give_warning(state, tokens, tokens.value, then="")

    [notice] = state.pending_notices
    assert "(0 of" not in notice.text
    assert notice.text == (
        "Approaching the token budget (the next call may take it to about 9,000 of "
        "10,000 tokens). The Oracle has been asked to wrap up."
    )
    assert notice.value == 9_000  # the figures beside it say the same


def test_a_warning_on_an_estimate_says_what_is_used_so_far_too() -> None:
    state = AgentState("r")
    tokens = Measure(Metric.TOKENS, 4_000, 9_000, 10_000, 10_000, 80,
                     TerminationReason.TOKEN_BUDGET)  # fmt: skip

    give_warning(state, tokens, tokens.value, then="")

    [notice] = state.pending_notices
    assert notice.text.startswith(
        "Approaching the token budget (4,000 of 10,000 tokens so far; the next call may "
        "take it to about 9,000)."
    )
