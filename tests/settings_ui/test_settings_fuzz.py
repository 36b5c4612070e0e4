"""Arbitrary payloads at every way in: never a server error, never a value out of bounds."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.config import FIELDS, LimitAction
from tests.settings_ui.conftest import assert_within_bounds

NAMES = [spec.name for spec in FIELDS]
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["0", "1", "50", "51", "1e3", " 7 ", "nan", "-inf", "١٢", "true", "on"]),
    st.sampled_from([action.value for action in LimitAction] + ["openai/gpt-4o-mini", ""]),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
keys = st.sampled_from(NAMES) | st.text(max_size=20)
payloads = st.dictionaries(keys, json_values, max_size=6)
form_payloads = st.dictionaries(keys, st.text(max_size=30) | scalars.map(str), max_size=8)


def client_for(user: User) -> Client:
    client = Client(raise_request_exception=True)
    client.force_login(user)
    return client


@FUZZ
@given(payload=payloads)
def test_the_api_never_fails_nor_stores_a_bad_value(alice: User, payload: dict[str, Any]):
    response = client_for(alice).patch(
        "/api/settings/", json.dumps(payload), content_type="application/json"
    )

    assert response.status_code in (200, 400)
    assert_within_bounds(alice)


@FUZZ
@given(payload=form_payloads)
def test_the_plain_form_never_fails_nor_stores_a_bad_value(alice: User, payload: dict[str, str]):
    response = client_for(alice).post("/settings/", payload)

    assert response.status_code in (302, 400)
    assert_within_bounds(alice)


@FUZZ
@given(name=st.sampled_from(NAMES), payload=form_payloads)
def test_each_field_endpoint_never_fails_nor_stores_a_bad_value(
    alice: User, name: str, payload: dict[str, str]
):
    response = client_for(alice).post(f"/settings/fields/{name}/", payload)

    assert response.status_code in (200, 400)
    assert_within_bounds(alice)
