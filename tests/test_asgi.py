"""The web process's ASGI application (`oracle.asgi`), called as daphne calls it.

Its handler runs Django's middleware as one synchronous chain in one thread (see
`ops.handler`): every middleware must still do its part (sessions, log-in, CSRF, the
security headers, the rate limits), a sync view and an async one (the SSE stream) must
both answer, and the database connections a request opens must be its thread's.
The other tests call views through Django's test client, which has its own handler.
"""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from asgiref.testing import ApplicationCommunicator
from django.contrib.auth.models import User
from django.test import Client

from accounts.services import api_token_create
from chat.models import Message, Role, Run, RunEvent, RunStatus
from chat.services import conversation_create
from oracle.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)


async def call(
    method: str, path: str, *, body: bytes = b"", headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """One request as daphne makes it; its status, headers and whole body."""
    pairs = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    scope = {
        "type": "http", "http_version": "1.1", "method": method, "path": path,
        "raw_path": path.encode(), "query_string": b"", "scheme": "http",
        "headers": [(b"host", b"testserver"), *pairs], "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }  # fmt: skip
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": body})
    start = await communicator.receive_output(10)
    response: dict[str, Any] = {"status": start["status"], "body": b""}
    response["headers"] = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    while True:
        part = await communicator.receive_output(10)
        response["body"] += part.get("body", b"")
        if not part.get("more_body"):
            return response


@sync_to_async
def session_cookie(user: User) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


async def test_a_page_has_its_security_headers_and_a_csrf_cookie() -> None:
    response = await call("GET", "/login/")

    assert response["status"] == 200
    assert response["headers"]["x-frame-options"] == "DENY"
    assert response["headers"]["x-content-type-options"] == "nosniff"
    assert "csrftoken=" in response["headers"]["set-cookie"]


async def test_pages_need_a_log_in_and_a_session_is_one(alice: User) -> None:
    cookie = await session_cookie(alice)

    anonymous = await call("GET", "/")
    logged_in = await call("GET", "/", headers={"cookie": cookie})

    assert anonymous["status"] == 302
    assert anonymous["headers"]["location"].startswith("/login/")
    assert logged_in["status"] == 200
    assert b"alice" in logged_in["body"]


async def test_a_post_without_its_csrf_token_is_refused_and_changes_nothing(alice: User) -> None:
    cookie = await session_cookie(alice)

    form = {"cookie": cookie, "content-type": "application/x-www-form-urlencoded"}
    refused = await call("POST", "/c/new/", headers=form)

    assert refused["status"] == 403
    assert not await _conversations(alice)


async def test_an_api_token_reaches_a_view_and_a_bad_one_does_not(alice: User) -> None:
    _, token = await _token(alice)

    good = await call("GET", "/api/conversations/", headers={"authorization": f"Bearer {token}"})
    bad = await call("GET", "/api/conversations/", headers={"authorization": "Bearer nope"})

    assert good["status"] == 200
    assert bad["status"] == 401


async def test_a_finished_runs_events_stream_through_the_async_view(alice: User) -> None:
    run_id, token = await _finished_run(alice)

    response = await call(
        "GET", f"/api/runs/{run_id}/events/", headers={"authorization": f"Bearer {token}"}
    )

    assert response["status"] == 200
    assert response["headers"]["content-type"] == "text/event-stream"
    body = response["body"].decode()
    assert [line for line in body.splitlines() if line.startswith("event: ")] == [
        "event: run.started", "event: assistant.delta", "event: run.finished",
    ]  # fmt: skip


async def _conversations(user: User) -> list[Any]:
    return await sync_to_async(lambda: list(user.conversations.all()))()


async def _token(user: User) -> tuple[Any, str]:
    return await sync_to_async(api_token_create)(user=user, name="asgi")


async def _finished_run(user: User) -> tuple[str, str]:
    def make() -> tuple[str, str]:
        conversation = conversation_create(owner=user, title="Done")
        message = Message.objects.create(
            conversation=conversation, seq=1, role=Role.USER, content="Question?"
        )
        run = Run.objects.create(
            conversation=conversation, status=RunStatus.FINISHED, reason="completed",
            user_message=message, last_event_seq=3,
        )  # fmt: skip
        for seq, kind in enumerate(("run.started", "assistant.delta", "run.finished"), 1):
            RunEvent.objects.create(run=run, seq=seq, type=kind, data={"seq": seq, "type": kind})
        _, token = api_token_create(user=user, name="asgi")
        return str(run.pk), token

    return await sync_to_async(make)()


WARM_THEN_SEND = """
import json, sys
import django
django.setup()
from kombu import Connection
from ops.handler import warm_up
from runs.queue import _Sent
from oracle.celery import app

warm_up().result(timeout=30)
connected = []
factory = Connection._connection_factory
Connection._connection_factory = lambda self, *a, **k: connected.append(1) or factory(self, *a, **k)
warmed = set(sys.modules)
app.send_task(  # as a post sends its run (runs.queue), to a queue of its own
    "oracle.nothing", queue="oracle-test-warm-up", retry=False, ignore_result=True,
    result_cls=_Sent,
)
print(json.dumps({"modules": sorted(set(sys.modules) - warmed), "connected": len(connected)}))
app.connection_for_write().default_channel.client.delete("oracle-test-warm-up")
"""


def test_the_web_process_prepares_its_first_send_of_a_run_as_it_starts() -> None:
    """A first post after a start paid 21 ms for Celery's and kombu's first send (their
    modules, the broker connection) against 1 for the next; the web process prepares
    both as it starts (oracle.asgi), so the first user's post waits for neither."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from tests.processes import base_env

    done = subprocess.run(
        [sys.executable, "-c", WARM_THEN_SEND],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[1],
        env=base_env(DJANGO_SETTINGS_MODULE="oracle.settings"),
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-2000:]
    first_send = json.loads(done.stdout.strip().splitlines()[-1])
    assert first_send == {"modules": [], "connected": 0}
