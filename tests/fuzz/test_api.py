"""Every API endpoint and method under arbitrary requests (body, content type, query,
headers, credentials, URL parameters; and the methods it does not answer): never a
server error, errors always in JSON, and a refused request (4xx) changes no row.

The table must name every route Django resolves under `api/`: a new endpoint without
an entry here fails `test_every_api_route_is_fuzzed`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from agents.skills import skill_names
from chat.models import Run, RunStatus
from chat.services import conversation_create
from knowledge.models import Document
from ops.models import SpendCaps
from tests.fuzz.strategies import (
    ABSENT,
    CONTENT_TYPES,
    NO_BODY,
    SETTINGS_BODY,
    UPLOAD_BODY,
    Body,
    Parts,
    fuzzing,
    header_text,
    hostile_text,
    json_body,
    mixed,
)
from tests.fuzz.world import World, build_world, snapshot
from tests.routes import every_pattern

pytestmark = pytest.mark.django_db
PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")
METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS", "TRACE", "BREW"]
OTHER = "other"  # the methods a route does not answer
OTHER_EXAMPLES = 10
event_numbers = st.integers(0, 5).map(str)


@dataclass(frozen=True)
class Method:
    """How to fuzz one method of a route: how many examples it is worth, its body, and
    the query parameters and headers it reads (good values given)."""

    examples: int
    body: Body = NO_BODY
    query: dict[str, st.SearchStrategy[str]] = field(default_factory=dict)
    headers: dict[str, st.SearchStrategy[str]] = field(default_factory=dict)


title = st.text(max_size=40)
ENDPOINTS: dict[str, dict[str, Method]] = {
    "api/conversations/": {
        "GET": Method(10),
        "POST": Method(40, json_body(title=title, skill=st.sampled_from(skill_names()))),
    },
    "api/conversations/<str:conversation_id>/": {
        "GET": Method(15),
        "PATCH": Method(40, json_body(title=title)),
        "DELETE": Method(15),
    },
    "api/conversations/<str:conversation_id>/messages/": {
        "POST": Method(40, json_body(content=st.text(min_size=1, max_size=40))),
    },
    "api/skills/": {"GET": Method(10)},
    "api/runs/<str:run_id>/": {"GET": Method(15)},
    "api/runs/<str:run_id>/events/": {
        "GET": Method(30, query={"after": event_numbers}, headers={"Last-Event-ID": event_numbers}),
    },
    "api/runs/<str:run_id>/cancel/": {"POST": Method(20)},
    "api/runs/<str:run_id>/continue/": {"POST": Method(20)},
    "api/runs/<str:run_id>/approve/": {
        "POST": Method(30, json_body(call_id=st.text(max_size=20), always=st.booleans()))
    },
    "api/runs/<str:run_id>/deny/": {"POST": Method(30, json_body(call_id=st.text(max_size=20)))},
    "api/tools/": {"GET": Method(10)},
    "api/tools/grants/revoke/": {
        "POST": Method(
            30,
            json_body(
                conversation=st.text(max_size=40),
                server=st.text(max_size=40),
                tool=st.text(max_size=40),
            ),
        )
    },
    "api/documents/": {"GET": Method(10), "POST": Method(60, UPLOAD_BODY)},
    "api/documents/<str:document_id>/": {"GET": Method(15), "DELETE": Method(20)},
    "api/settings/": {"GET": Method(10), "PATCH": Method(40, SETTINGS_BODY)},
}
CASES = [(route, method) for route, methods in ENDPOINTS.items() for method in [*methods, OTHER]]


def api_routes() -> set[str]:
    """Every URL pattern under `api/`, as its route, from Django's own resolver."""
    return {pattern.route for pattern in every_pattern() if pattern.route.startswith("api/")}


def test_every_api_route_is_fuzzed() -> None:
    assert api_routes() == set(ENDPOINTS)


def method_spec(route: str, method: str) -> Method:
    return ENDPOINTS[route].get(method, Method(OTHER_EXAMPLES))


def url_value(text: str) -> str:
    """A URL parameter as a client sends it: percent-encoded, and a lone surrogate as
    the bytes that are not UTF-8 (Django keeps them percent-encoded)."""
    return quote(text[:2_000], safe="", errors="surrogatepass")


def request_parts(route: str, method: str, world: World) -> Parts:
    """The parts of a request: its method, credentials, content type, URL parameters,
    query and headers, and its body's own."""
    spec = method_spec(route, method)
    others = st.sampled_from([m for m in METHODS if m not in ENDPOINTS[route]])
    parts: Parts = {
        # A method the route does not answer is the hostile part, or always for OTHER.
        "method": (others if method == OTHER else st.just(method), others),
        "credentials": (
            st.sampled_from(["session", "alice"]),
            st.sampled_from(["bob", "none", "garbage"]),
        ),
        "content type": (st.just(spec.body.content_type), st.sampled_from(CONTENT_TYPES)),
    }
    for name in PARAMETER.findall(route):
        parts[name] = (
            st.sampled_from(world.mine[name]),
            st.sampled_from(world.others[name]) | hostile_text,
        )
    for name, good in spec.query.items():
        parts[f"?{name}"] = (good | st.just(ABSENT), hostile_text | header_text)
    parts["other query"] = (st.just({}), st.dictionaries(hostile_text, hostile_text, max_size=2))
    for name, good in spec.headers.items():
        parts[f"header {name}"] = (good | st.just(ABSENT), header_text)
    return {**parts, **spec.body.parts}


def send(
    route: str, spec: Method, values: dict[str, Any], clients: dict[str, Client], world: World
) -> Any:
    path = "/" + PARAMETER.sub(lambda match: url_value(values[match.group(1)]), route)
    query = {name[1:]: v for name, v in values.items() if name.startswith("?") and v is not ABSENT}
    query |= values["other query"]
    if query:
        query = {name[:100]: value[:2_000] for name, value in query.items()}
        path += "?" + urlencode(query, errors="surrogatepass")
    headers = {
        "HTTP_" + name.removeprefix("header ").upper().replace("-", "_"): value
        for name, value in values.items()
        if name.startswith("header ") and value is not ABSENT
    }
    tokens = {"alice": world.alice_token, "bob": world.bob_token, "garbage": "\x00ÿ"}
    if values["credentials"] in tokens:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {tokens[values['credentials']]}"
    client = clients["session" if values["credentials"] == "session" else "anonymous"]
    body = spec.body.write(values)
    return client.generic(values["method"], path, body, values["content type"], **headers)


@pytest.fixture
def world(alice: User, bob: User) -> World:
    return build_world(alice, bob)


@pytest.fixture
def clients(alice: User) -> dict[str, Client]:
    session = Client(raise_request_exception=True)
    session.force_login(alice)
    return {"session": session, "anonymous": Client(raise_request_exception=True)}


@pytest.mark.parametrize(("route", "method"), CASES)
def test_no_request_fails_nor_changes_anything_when_refused(
    clients: dict[str, Client], world: World, route: str, method: str
) -> None:
    spec, parts = method_spec(route, method), request_parts(route, method, world)

    @fuzzing(spec.examples)
    @given(values=mixed(parts))
    def fuzz(values: dict[str, Any]) -> None:
        with transaction.atomic():  # rolled back: every example meets the same world
            before = snapshot()
            response = send(route, spec, values, clients, world)
            assert response.status_code < 500, response.content[:300]
            if response.status_code >= 400:
                assert response["Content-Type"] == "application/json", response.content[:300]
                assert snapshot() == before, f"a {response.status_code} changed the database"
            transaction.set_rollback(True)

    fuzz()


def test_a_refused_continue_stores_no_spending_caps(client: Client, alice: User) -> None:
    """Found by fuzzing (POST /api/runs/<a completed run>/continue/): reading the daily
    spending caps created their row, even for the 409."""
    run = Run.objects.create(
        conversation=conversation_create(owner=alice), status=RunStatus.FINISHED, reason="completed"
    )
    client.force_login(alice)

    response = client.post(f"/api/runs/{run.pk}/continue/")

    assert response.status_code == 409
    assert not SpendCaps.objects.exists()


def test_an_upload_titled_with_a_nul_gets_a_400(client: Client, alice: User) -> None:
    """Found by fuzzing on PostgreSQL (a multipart upload with the title "\\x00"): its
    text columns refuse NUL, and the upload was a 500 there."""
    client.force_login(alice)
    file = SimpleUploadedFile("notes.md", b"# Notes\n\nOwls.", "text/markdown")

    response = client.post("/api/documents/", {"title": "a\x00b", "file": file})

    assert response.status_code == 400
    assert "title" in response.json()["errors"]
    assert not Document.objects.filter(owner=alice).exists()
