"""A broken multipart body sent to the API through the real server (daphne): every
`/api/` POST answers 400 in the API's JSON, as all its errors are, and changes nothing.
Before, daphne's HTTP layer (Twisted) parsed the body itself and answered a bare 400,
with no JSON, that Django never saw."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from django.urls import reverse

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.stack import OracleStack
from tests.test_route_matrix import ROUTES, every_route

# Content types whose body no parser can read: no boundary, an empty one, one that is
# not ASCII, one longer than any parser takes.
BROKEN = [
    ("multipart/form-data", b"garbage"),
    ("multipart/form-data; boundary=", b"--\r\n"),
    ("multipart/form-data; boundary=\xe9t\xe9", b"--\xe9t\xe9\r\n"),
    ("multipart/form-data; boundary=" + "b" * 250, b"--" + b"b" * 250 + b"\r\n"),
]
# A body cut off in its file part (no closing boundary): what a dropped upload sends.
TRUNCATED = (
    "multipart/form-data; boundary=cut",
    b'--cut\r\nContent-Disposition: form-data; name="file"; filename="notes.md"\r\n'
    b"Content-Type: text/markdown\r\n\r\n# Notes, half of th",
)

SNAPSHOT = (
    "from tests.fuzz.world import snapshot; import json; print(json.dumps(snapshot(), default=str))"
)


def api_posts() -> list[str]:
    """The name of every `/api/` route that takes a POST (the route table names them all)."""
    routes = every_route()
    return sorted(
        name
        for name, route in ROUTES.items()
        if "POST" in route.methods and routes[name].route.startswith("api/")
    )


def rows(stack: OracleStack) -> object:
    answer = processes.shell(SNAPSHOT, env=stack.env)
    assert answer.returncode == 0, answer.stderr
    return json.loads(answer.stdout.strip().splitlines()[-1])


@pytest.fixture
def targets(stack: OracleStack, fake_provider: FakeServer) -> Iterator[dict[str, str]]:
    """The address of each API POST route, for objects of the user `mallory` owns."""
    fake_provider.set_script([{"text": ["Noted."]}])
    client = stack.client(stack.create_user("mallory"))
    conversation, run = start_conversation(client, "Hello")
    wait_until_finished(client, run)
    ids = {"conversation": conversation, "run": run}
    routes = every_route()
    urls = {}
    for name in api_posts():
        kind = ROUTES[name].owned
        urls[name] = reverse(name, kwargs=dict.fromkeys(routes[name].params, ids.get(kind or "")))
    yield urls


def logged_in(stack: OracleStack, username: str) -> httpx.Client:
    """A browser-like client with `username`'s session and the CSRF token it would send."""
    browser = httpx.Client(base_url=stack.url, timeout=30)
    browser.get("/login/")
    token = browser.cookies["csrftoken"]
    answer = browser.post(
        "/login/",
        data={"username": username, "password": "correct horse battery",
              "csrfmiddlewaretoken": token},
    )  # fmt: skip
    assert answer.status_code == 302, answer.text
    browser.headers["X-CSRFToken"] = browser.cookies["csrftoken"]
    return browser


def assert_json_400(response: httpx.Response, *, key: str = "error", where: object = "") -> None:
    assert response.status_code == 400, (where, response.status_code, response.content[:200])
    assert response.headers.get("content-type") == "application/json", (where, response.headers)
    said = response.json()
    assert isinstance(said, dict) and said.get(key), (where, said)


def test_the_routes_taking_a_post_are_found() -> None:
    assert {"api-conversations", "api-documents", "api-run-approve"} <= set(api_posts())


def test_a_broken_multipart_body_gets_a_json_400_on_every_api_post(
    stack: OracleStack, targets: dict[str, str]
) -> None:
    token = stack.create_user("trudy")
    clients = {"token": stack.client(token), "session": logged_in(stack, "trudy")}
    before = rows(stack)

    for how, client in clients.items():
        for name, url in targets.items():
            for content_type, body in BROKEN:
                headers = {"Content-Type": content_type.encode("latin-1")}
                response = client.post(url, content=body, headers=headers)
                assert_json_400(response, where=(how, name, content_type))
                assert "multipart/form-data" in response.json()["error"]

    assert rows(stack) == before


@pytest.mark.parametrize("how", ["token", "session"])
def test_a_truncated_upload_gets_a_json_400_and_saves_nothing(stack: OracleStack, how: str) -> None:
    username = f"ursula-{how}"
    token = stack.create_user(username)
    client = stack.client(token) if how == "token" else logged_in(stack, username)
    content_type, body = TRUNCATED
    before = rows(stack)

    for url in ("/api/documents/", "/api/conversations/"):
        response = client.post(url, content=body, headers={"Content-Type": content_type})
        assert_json_400(response, key="errors", where=url)

    assert rows(stack) == before
