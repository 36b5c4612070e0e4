"""Helpers for the settings tests: logged-in clients and values on each side of every bound."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.config import FIELDS, FieldSpec
from settings_ui.models import AgentSettings

NUMERIC = [spec for spec in FIELDS if spec.kind in ("int", "float")]


def step(spec: FieldSpec) -> float:
    return 0.01 if spec.kind == "float" else 1


def number(spec: FieldSpec, value: float) -> int | float:
    return round(value, 2) if spec.kind == "float" else int(value)


def bound_cases() -> list[Any]:
    """(spec, value, accepted) for below, at and above each bound of every numeric field."""
    cases = []
    for spec in NUMERIC:
        assert spec.min is not None and spec.max is not None
        for label, value, accepted in (
            ("below-min", spec.min - step(spec), False),
            ("at-min", spec.min, True),
            ("at-max", spec.max, True),
            ("above-max", spec.max + step(spec), False),
        ):
            cases.append(
                pytest.param(spec, number(spec, value), accepted, id=f"{spec.name}-{label}")
            )
    return cases


def stored(user: User) -> dict[str, Any]:
    """What the database holds for `user` (the defaults before the first save)."""
    row = AgentSettings.objects.filter(user=user).first()
    return row.values() if row else {spec.name: spec.default for spec in FIELDS}


def assert_within_bounds(user: User) -> None:
    for name, value in stored(user).items():
        spec = next(s for s in FIELDS if s.name == name)
        if spec.kind in ("int", "float"):
            assert spec.min <= value <= spec.max, (name, value)
        elif spec.kind == "choice":
            assert value in spec.choices, (name, value)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """The users' passwords are hashed for each test; the default hasher is slow on purpose."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice_client(alice: User) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def bob_client(bob: User) -> Client:
    client = Client()
    client.force_login(bob)
    return client


@pytest.fixture
def two_models(settings: Any) -> list[str]:
    """An operator who allows a priced model and one LiteLLM has no price for."""
    settings.ORACLE_MODEL = "openai/gpt-4o-mini"
    settings.ORACLE_MODELS = ["openai/gpt-4o-mini", "ollama/llama3"]
    return settings.ORACLE_MODELS
