"""AgentConfig: one declaration of fields, defaults and bounds, one message per bad field."""

from __future__ import annotations

import pytest

from agents.config import FIELDS, AgentConfig, ConfigError, LimitAction, validate_config


def test_the_defaults_are_those_of_the_spec():
    config = AgentConfig()
    assert (config.max_iterations, config.unlimited_iterations) == (15, False)
    assert (config.soft_warning_percent, config.token_budget) == (70, 50_000)
    assert (config.token_warning_percent, config.timeout_seconds) == (80, 120)
    assert (config.max_tool_calls_per_turn, config.max_parallel_tools) == (30, 3)
    assert (config.max_cost_usd, config.limit_action) == (1.00, LimitAction.STOP)
    assert (config.extend_multiplier, config.max_extensions) == (4, 1)
    assert (config.no_progress_repeats, config.max_consecutive_tool_errors) == (3, 3)
    # The declaration agrees with the dataclass.
    assert {spec.name: spec.default for spec in FIELDS} == AgentConfig().to_dict()


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [
        ("max_iterations", 1, 50),
        ("soft_warning_percent", 10, 100),
        ("token_budget", 1_000, 200_000),
        ("token_warning_percent", 10, 100),
        ("timeout_seconds", 10, 600),
        ("max_tool_calls_per_turn", 1, 100),
        ("max_parallel_tools", 1, 10),
        ("max_cost_usd", 0.01, 100.0),
        ("extend_multiplier", 2, 10),
        ("max_extensions", 1, 5),
        ("no_progress_repeats", 2, 10),
        ("max_consecutive_tool_errors", 1, 10),
    ],
)
def test_bounds_are_inclusive_and_values_outside_are_refused(name, low, high):
    assert getattr(AgentConfig.from_raw({name: low}), name) == low
    assert getattr(AgentConfig.from_raw({name: str(high)}), name) == high
    assert validate_config({name: low / 2 if isinstance(low, float) else low - 1}) != {}
    assert "Must be between" in validate_config({name: high * 2})[name][0]


def test_every_bad_field_gets_one_clear_message():
    raw = {
        "max_iterations": "0",
        "token_budget": "lots",
        "limit_action": "explode",
        "max_cost_usd": "nan",
        "soft_warning_percent": True,
        "colour": "blue",
        "timeout_seconds": "60",
    }
    with pytest.raises(ConfigError) as caught:
        AgentConfig.from_raw(raw)

    assert caught.value.errors == {
        "max_iterations": ["Must be between 1 and 50."],
        "token_budget": ["Must be a whole number."],
        "limit_action": ["Must be one of: stop, pause, extend, warn."],
        "max_cost_usd": ["Must be a number."],
        "soft_warning_percent": ["Must be a whole number."],
        "colour": ["Unknown setting."],
    }


def test_from_raw_builds_over_a_base_config():
    base = AgentConfig(max_iterations=20)
    config = AgentConfig.from_raw({"limit_action": "PAUSE", "max_cost_usd": "2.5"}, base=base)
    assert config.max_iterations == 20
    assert config.limit_action is LimitAction.PAUSE
    assert config.max_cost_usd == 2.5


def test_the_model_must_be_one_the_operator_allows():
    allowed = ["openai/gpt-4o-mini"]
    assert validate_config({"model": "openai/gpt-4o-mini"}, allowed_models=allowed) == {}
    errors = validate_config({"model": "openai/o1"}, allowed_models=allowed)
    assert errors == {"model": ["Must be one of the allowed models: openai/gpt-4o-mini."]}


def test_odd_numbers_are_clear_errors_not_crashes():
    from agents.config import validate_config

    errors = validate_config(
        {
            "max_cost_usd": 10**400,
            "max_iterations": "1_0",
            "token_budget": "٣٠٠٠",  # Arabic-Indic digits
            "timeout_seconds": "1e2",
            "soft_warning_percent": "nan",
        }
    )

    assert errors == {
        "max_cost_usd": ["Must be between 0.01 and 100.00."],
        "max_iterations": ["Must be a whole number."],
        "token_budget": ["Must be a whole number."],
        "timeout_seconds": ["Must be a whole number."],
        "soft_warning_percent": ["Must be a whole number."],
    }


def test_decimal_text_is_read_for_cost():
    from agents.config import AgentConfig

    assert AgentConfig.from_raw({"max_cost_usd": " 2.5 "}).max_cost_usd == 2.5
    assert AgentConfig.from_raw({"max_cost_usd": ".5"}).max_cost_usd == 0.5


def test_with_no_allowed_models_the_error_says_so():
    from agents.config import validate_config

    assert validate_config({"model": "openai/gpt-4o"}, allowed_models=[]) == {
        "model": ["Only the server's default model is available here."]
    }
