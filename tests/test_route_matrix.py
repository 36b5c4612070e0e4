"""Every route, walked as an attacker would: a state-changing request without a CSRF
token is refused (403) and changes nothing; another user's ids answer 404 on every
method and change nothing; staff pages are 404 to everyone else. The table below must
name every route Django knows, so a new one cannot slip in untested."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.services import api_token_create
from chat.models import Message, Role, Run, RunStatus
from chat.services import conversation_create
from knowledge.services import document_upload
from ops.models import Alert, AlertKind
from tests.fuzz.world import snapshot
from tests.routes import Pattern, every_pattern

pytestmark = pytest.mark.django_db

WRITES = ("POST", "PUT", "PATCH", "DELETE")
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@dataclass(frozen=True)
class Route:
    """What a route takes: its methods, and the kind of object its id names (if any)."""

    methods: tuple[str, ...]
    owned: str | None = None  # "conversation", "run", "document", "image" or "token"
    staff: bool = False
    anonymous: bool = False  # reachable logged out (log-in, sign-up, health)
    example: str = ""  # a fixed value for a parameter that is not an object's id


ROUTES: dict[str, Route] = {
    # ops
    "healthz": Route(("GET",), anonymous=True),
    "metrics": Route(("GET",), anonymous=True),
    # accounts
    "signup": Route(("GET", "POST"), anonymous=True),
    "login": Route(("GET", "POST"), anonymous=True),
    "logout": Route(("POST",)),
    "password-change": Route(("GET", "POST")),
    # chat pages
    "home": Route(("GET",)),
    "conversation-new": Route(("POST",)),
    "attachment-upload": Route(("POST",)),
    "conversation": Route(("GET",), owned="conversation"),
    "conversation-post": Route(("POST",), owned="conversation"),
    "conversation-rename": Route(("POST",), owned="conversation"),
    "conversation-delete": Route(("POST",), owned="conversation"),
    "conversation-totals": Route(("GET",), owned="conversation"),
    "conversation-model": Route(("POST",), owned="conversation"),
    "conversation-edit": Route(("POST",), owned="conversation"),
    "run-regenerate": Route(("POST",), owned="run"),
    "sidebar-list": Route(("GET",)),
    "sidebar-item": Route(("GET",), owned="conversation"),
    "sidebar-rename": Route(("GET", "POST"), owned="conversation"),
    "sidebar-delete": Route(("POST",), owned="conversation"),
    "sidebar-restore": Route(("POST",), owned="conversation"),
    "conversation-export-md": Route(("GET",), owned="conversation"),
    "conversation-export-json": Route(("GET",), owned="conversation"),
    # chat API
    "api-conversations": Route(("GET", "POST")),
    "api-conversation": Route(("GET", "PATCH", "DELETE"), owned="conversation"),
    "api-conversation-messages": Route(("POST",), owned="conversation"),
    "api-skills": Route(("GET",)),
    "api-run": Route(("GET",), owned="run"),
    "api-run-events": Route(("GET",), owned="run"),
    "api-run-cancel": Route(("POST",), owned="run"),
    "api-run-continue": Route(("POST",), owned="run"),
    "api-run-approve": Route(("POST",), owned="run"),
    "api-run-deny": Route(("POST",), owned="run"),
    # tools
    "tools": Route(("GET",)),
    "tools-server-switch": Route(("POST",), example="time"),
    "tools-grant-revoke": Route(("POST",)),
    "api-tools": Route(("GET",)),
    "api-tools-grant-revoke": Route(("POST",)),
    # knowledge
    "documents": Route(("GET", "POST")),
    "document-list": Route(("GET",)),
    "document": Route(("GET",), owned="document"),
    "document-image": Route(("GET",), owned="image"),
    "document-delete": Route(("POST",), owned="document"),
    "api-documents": Route(("GET", "POST")),
    "api-document": Route(("GET", "DELETE"), owned="document"),
    # settings
    "settings": Route(("GET", "POST")),
    "settings-field": Route(("POST",), example="max_iterations"),
    "settings-reset": Route(("POST",)),
    "settings-price-notice": Route(("GET",)),
    "settings-token-create": Route(("POST",)),
    "settings-token-revoke": Route(("POST",), owned="token"),
    "api-settings": Route(("GET", "PATCH")),
    # staff
    "dashboard": Route(("GET",), staff=True),
    "dashboard-runs": Route(("GET",), staff=True),
    "dashboard-hours": Route(("GET",), staff=True),
    "dashboard-recommendation-apply": Route(("POST",), staff=True),
    "dashboard-alert-acknowledge": Route(("POST",), staff=True, example="alert"),
}

UNNAMED = {"favicon.ico"}  # a redirect to the icon


def every_route() -> dict[str, Pattern]:
    """Each of our named routes (the admin is Django's own: it checks staff and CSRF)."""
    found = {}
    for pattern in every_pattern():
        if pattern.route.startswith("admin/"):
            continue
        assert pattern.name or pattern.route in UNNAMED, f"an unnamed route: {pattern.route}"
        if pattern.name:
            found[pattern.name] = pattern
    return found


def test_the_table_names_every_route() -> None:
    assert set(every_route()) == set(ROUTES)


# What each owner has: one of every kind of object a route can name.
@dataclass
class Owned:
    conversation: str
    run: str
    document: str
    image: str  # an image document (its picture is served by a route of its own)
    token: str


def belongings(user: User) -> Owned:
    conversation = conversation_create(owner=user, title=f"{user.username}'s secret")
    message = Message.objects.create(
        conversation=conversation, seq=1, role=Role.USER, content=f"{user.username} asks"
    )
    run = Run.objects.create(
        conversation=conversation, status=RunStatus.PAUSED, reason="max_iterations",
        user_message=message,
    )  # fmt: skip
    Message.objects.create(
        conversation=conversation, run=run, seq=2, role=Role.ASSISTANT, content="half an answer"
    )
    document = document_upload(
        owner=user,
        file=SimpleUploadedFile("notes.md", b"# Notes\n\nprivate", content_type="text/markdown"),
        title=f"{user.username}'s notes",
    )
    image = document_upload(
        owner=user, file=SimpleUploadedFile("lions.png", PIXEL, content_type="image/png")
    )
    token, _ = api_token_create(user=user, name=f"{user.username}'s token")
    return Owned(str(conversation.id), str(run.id), str(document.id), str(image.id), str(token.id))


def url_of(name: str, owned: Owned | None, alert: int | None = None) -> str:
    route = ROUTES[name]
    if route.owned:
        assert owned is not None
        value = getattr(owned, route.owned)
    else:
        value = str(alert) if route.example == "alert" else route.example
    return reverse(name, kwargs=dict.fromkeys(every_route()[name].params, value))


# Bodies that would succeed, so that a refusal is the guard's doing, not the body's.
BODIES: dict[str, dict[str, Any]] = {
    "signup": {"username": "mallory", "password1": "long phrase 1", "password2": "long phrase 1"},
    "login": {"username": "alice", "password": "correct horse battery"},
    "conversation-post": {"content": "hello"},
    "conversation-rename": {"title": "renamed"},
    "conversation-model": {"model": "offline"},
    "conversation-edit": {"content": "edited"},
    "sidebar-rename": {"title": "renamed"},
    "api-conversations": {"title": "new"},
    "api-conversation": {"title": "renamed"},
    "api-conversation-messages": {"content": "hello"},
    "settings-field": {"max_iterations": "7"},
    "settings-token-create": {"name": "new token"},
    "api-settings": {"max_iterations": 7},
    "dashboard-recommendation-apply": {"agent_type": "default", "max_iterations": "5"},
}  # fmt: skip
JSON_BODIES = {"api-conversations", "api-conversation", "api-conversation-messages",
               "api-settings", "api-tools-grant-revoke"}  # fmt: skip


def send(client: Client, method: str, url: str, name: str, **headers: str) -> Any:
    body = BODIES.get(name, {})
    if method == "GET":
        return client.get(url, **headers)
    if name in JSON_BODIES:
        return client.generic(method, url, data=json.dumps(body), content_type="application/json",
                              **headers)  # fmt: skip
    if method == "POST":
        return client.post(url, body, **headers)
    return client.generic(method, url, **headers)


@pytest.fixture
def alice_staff(alice: User) -> User:
    alice.is_staff = True
    alice.save()
    return alice


@pytest.fixture
def alert() -> int:
    from django.utils import timezone

    now = timezone.now()
    return Alert.objects.create(
        kind=AlertKind.SPEND, window_start=now, window_end=now, title="Many limits", value=1,
        threshold=0.5,
    ).pk  # fmt: skip


def csrf_cases() -> list[tuple[str, str]]:
    return [(name, m) for name, route in ROUTES.items() for m in route.methods if m in WRITES]


@pytest.mark.parametrize(("name", "method"), csrf_cases())
def test_a_write_without_a_csrf_token_is_refused_and_changes_nothing(
    alice_staff: User, alert: int, settings: Any, name: str, method: str
) -> None:
    """A page on another site can make the browser send the cookie, never the token."""
    settings.ORACLE_SIGNUP = "open"
    owned = belongings(alice_staff)
    url = url_of(name, owned, alert)
    client = Client(enforce_csrf_checks=True)
    if not ROUTES[name].anonymous:
        client.force_login(alice_staff)
    before = snapshot()

    response = send(client, method, url, name)

    assert response.status_code == 403, response.content[:300]
    assert snapshot() == before

    # The same request with the token gets past the check: the 403 was the token's.
    client.get("/login/" if ROUTES[name].anonymous else "/settings/")
    token = client.cookies["csrftoken"].value
    assert send(client, method, url, name, HTTP_X_CSRFTOKEN=token).status_code != 403


def owner_cases() -> list[tuple[str, str]]:
    return [(name, m) for name, route in ROUTES.items() if route.owned for m in route.methods]


@pytest.fixture
def intruder(client: Client, alice: User) -> Callable[[str, str, str], Any]:
    """Alice, logged in with a good CSRF token, sending whatever request she names."""
    client.force_login(alice)
    client.get("/settings/")
    token = client.cookies["csrftoken"].value

    def request(method: str, url: str, name: str) -> Any:
        return send(client, method, url, name, HTTP_X_CSRFTOKEN=token)

    return request


@pytest.mark.parametrize(("name", "method"), owner_cases())
def test_another_users_ids_are_404_and_change_nothing(
    alice: User, bob: User, intruder: Callable[..., Any], name: str, method: str
) -> None:
    belongings(alice)
    bobs = belongings(bob)
    url = url_of(name, bobs)
    before = snapshot()

    response = intruder(method, url, name)

    assert response.status_code == 404, (url, response.status_code, response.content[:200])
    assert snapshot() == before


@pytest.mark.parametrize(("name", "method"), owner_cases())
def test_another_users_ids_are_404_with_an_api_token(
    alice: User, bob: User, name: str, method: str
) -> None:
    """A bearer token reaches the API routes only; elsewhere it is no login at all."""
    bobs = belongings(bob)
    _, raw = api_token_create(user=alice)
    url = url_of(name, bobs)
    before = snapshot()

    response = send(Client(), method, url, name, HTTP_AUTHORIZATION=f"Bearer {raw}")

    if url.startswith("/api/"):
        assert response.status_code == 404
    else:
        assert response.status_code in (302, 401, 404)  # the login page or nothing
    assert snapshot() == before


def listing_cases() -> list[tuple[str, str]]:
    return [
        (name, "GET")
        for name, route in ROUTES.items()
        if "GET" in route.methods and not route.owned and not route.anonymous and not route.staff
    ]


@pytest.mark.parametrize(("name", "method"), listing_cases())
def test_pages_without_an_id_show_nothing_of_another_user(
    alice: User, bob: User, intruder: Callable[..., Any], name: str, method: str
) -> None:
    bobs = belongings(bob)
    response = intruder(method, url_of(name, None), name)

    assert response.status_code == 200
    body = response.content.decode()
    for secret in ("bob's secret", "bob's token", "bob's notes", bobs.conversation):
        assert secret not in body


def staff_cases() -> list[tuple[str, str]]:
    return [(name, m) for name, route in ROUTES.items() if route.staff for m in route.methods]


@pytest.mark.parametrize(("name", "method"), staff_cases())
def test_staff_routes_are_404_to_everyone_else(
    alice: User, alert: int, intruder: Callable[..., Any], name: str, method: str
) -> None:
    url = url_of(name, None, alert)
    before = snapshot()

    assert intruder(method, url, name).status_code == 404
    assert send(Client(), method, url, name).status_code == 404
    assert snapshot() == before


async def _socket(path: str, session: str) -> WebsocketCommunicator:
    from oracle.asgi import application

    return WebsocketCommunicator(
        application, path,
        headers=[(b"origin", b"http://localhost"), (b"host", b"localhost"),
                 (b"cookie", f"sessionid={session}".encode())],
    )  # fmt: skip


@pytest.mark.django_db(transaction=True)
async def test_the_socket_of_another_users_conversation_does_not_open() -> None:
    from asgiref.sync import sync_to_async

    def given() -> tuple[str, Owned]:
        alice = User.objects.create_user("alice", password="x")
        bob = User.objects.create_user("bob", password="x")
        client = Client()
        client.force_login(alice)
        return client.cookies["sessionid"].value, belongings(bob)

    session, bobs = await sync_to_async(given)()

    socket = await _socket(f"/ws/conversations/{bobs.conversation}/", session)
    connected, code = await socket.connect()

    assert not connected
    assert code == 4404


@pytest.mark.django_db(transaction=True)
async def test_a_socket_cannot_ask_for_another_users_run() -> None:
    from asgiref.sync import sync_to_async

    def given() -> tuple[str, Owned, Owned]:
        alice = User.objects.create_user("alice", password="x")
        bob = User.objects.create_user("bob", password="x")
        client = Client()
        client.force_login(alice)
        return client.cookies["sessionid"].value, belongings(alice), belongings(bob)

    session, alices, bobs = await sync_to_async(given)()
    socket = await _socket(f"/ws/conversations/{alices.conversation}/", session)
    connected, _ = await socket.connect()
    assert connected
    try:
        await socket.send_json_to({"type": "sync", "run_id": bobs.run, "last_seq": 0})
        answer = await socket.receive_json_from(timeout=5)
        assert answer == {"type": "error", "error": "No such run in this conversation."}

        # Her own run, as a control: the same frame with her id is answered with the run.
        await socket.send_json_to({"type": "sync", "run_id": alices.run, "last_seq": 0})
        assert f'data-run="{alices.run}"' in await socket.receive_from(timeout=5)
    finally:
        await socket.disconnect()
