"""Another user's run does not exist for you: every run route answers 404."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.services import api_token_create
from chat.models import Message, Role, Run, RunStatus
from chat.services import conversation_create

pytestmark = pytest.mark.django_db

ROUTES = [
    ("get", "/api/runs/{}/"),
    ("get", "/api/runs/{}/events/"),
    ("post", "/api/runs/{}/cancel/"),
    ("post", "/api/runs/{}/continue/"),
]


@pytest.fixture
def bobs_run(bob: User) -> Run:
    conversation = conversation_create(owner=bob)
    message = Message.objects.create(conversation=conversation, seq=1, role=Role.USER, content="x")
    return Run.objects.create(
        conversation=conversation, status=RunStatus.PAUSED, reason="max_iterations",
        user_message=message,
    )  # fmt: skip


@pytest.mark.parametrize(("method", "route"), ROUTES)
def test_another_users_run_is_404_with_a_session(
    client: Client, alice: User, bobs_run: Run, method: str, route: str
) -> None:
    client.force_login(alice)

    response = getattr(client, method)(route.format(bobs_run.pk))

    assert response.status_code == 404
    bobs_run.refresh_from_db()
    assert bobs_run.status == RunStatus.PAUSED


@pytest.mark.parametrize(("method", "route"), ROUTES)
def test_another_users_run_is_404_with_a_token(
    client: Client, alice: User, bobs_run: Run, method: str, route: str
) -> None:
    _, raw = api_token_create(user=alice)

    response = getattr(client, method)(
        route.format(bobs_run.pk), HTTP_AUTHORIZATION=f"Bearer {raw}"
    )

    assert response.status_code == 404


@pytest.mark.parametrize(("method", "route"), ROUTES)
def test_a_malformed_run_id_is_404(client: Client, alice: User, method: str, route: str) -> None:
    client.force_login(alice)

    assert getattr(client, method)(route.format("not-a-run")).status_code == 404


def test_another_users_conversation_takes_no_message(
    client: Client, alice: User, bob: User
) -> None:
    conversation = conversation_create(owner=bob)
    client.force_login(alice)

    response = client.post(
        f"/api/conversations/{conversation.id}/messages/", {"content": "hi"},
        content_type="application/json",
    )  # fmt: skip

    assert response.status_code == 404
    assert not Message.objects.exists()
