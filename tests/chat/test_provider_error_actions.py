"""A model that failed is explained in plain words, and the chat offers what can help:
Continue when the provider may answer next time (5xx, no connection, rate limit), the way
to Settings when only another key, model or request can (401/403, 404, 400)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.clock import Clock
from agents.config import AgentConfig
from agents.loop import RunDeps, start_run
from agents.testing.fake_server import FakeServer
from agents.tree import DefaultDecisionTree
from chat.fragments import run_actions_context, system_message
from chat.models import Message, Role, Run, RunStatus
from chat.run_view import RunView
from chat.services import conversation_create
from runs.recorder import RunRecorder

REFUSED_KEY = {"status": 401, "body": {"error": {"message": "Incorrect API key provided"}}}
SERVER_ERROR = {"status": 500, "body": {"error": {"message": "vLLM fell over"}}}
CONTINUE = "/continue/"
SETTINGS = 'href="/settings/">Pick another model</a>'


class Idle:
    """A journal that never writes: the recorder's rows stay in memory for the test."""

    def wake(self, *, now: bool = False) -> None:
        pass


async def recorded_ending(response: dict[str, Any]) -> tuple[Message, list[dict[str, Any]]]:
    """Run the engine against a provider answering `response` and fold its events as a
    worker does; the run's System message row and its events."""
    from agents.litellm_model import LiteLLMModel

    run = Run(status=RunStatus.RUNNING)
    recorder = RunRecorder(run, Idle())  # type: ignore[arg-type]
    with FakeServer([response], repeat_last=True) as server:
        deps = RunDeps(
            model=LiteLLMModel("openai/fake-model", api_base=server.base_url, api_key="k"),
            tree=DefaultDecisionTree(AgentConfig.from_raw({})),
            clock=Clock(),
            retry_base_delay=0.01,
        )
        await start_run("Hello?", deps, on_event=recorder)
    (notice,) = [message for message in recorder.new if message.role == Role.SYSTEM]
    return notice, recorder.pending


def shown(notice: Message) -> str:
    """The System message as the chat renders it, with the run's actions."""
    meta = notice.metadata
    actions = run_actions_context(
        "r1", paused=False, reason=str(meta["reason"]), problem=meta.get("problem")
    )
    return system_message("msg-1", meta, notice.content, actions)


async def test_a_refused_key_offers_settings_not_continue_and_keeps_the_detail_hidden() -> None:
    notice, _ = await recorded_ending(REFUSED_KEY)

    html = shown(notice)

    assert notice.content == (
        "The provider refused the API key (401). "
        "Check the key in the server's settings or pick another model."
    )
    assert CONTINUE not in html
    assert SETTINGS in html
    assert notice.metadata["problem"] == "auth"
    assert "Incorrect API key provided" in notice.metadata["detail"]  # kept for staff
    for raw in ("litellm", "Exception", "Incorrect API key", "{"):
        assert raw not in html


async def test_a_server_error_offers_continue() -> None:
    notice, _ = await recorded_ending(SERVER_ERROR)

    html = shown(notice)

    assert notice.content == (
        "The model provider failed (500) on 4 of 4 attempts. Press Continue to try again."
    )
    assert 'hx-post="/api/runs/r1/continue/"' in html
    assert SETTINGS not in html
    assert notice.metadata["problem"] == "provider_failed"
    assert "vLLM fell over" not in html


def test_a_model_error_is_labelled_as_such_whatever_its_kind() -> None:
    view = RunView("r1")
    html = "".join(
        view.render(event)
        for event in (
            {"type": "assistant.message", "seq": 1, "text": "Stopped.", "final": True},
            {"type": "run.finished", "seq": 2, "reason": "provider_error", "problem": "auth"},
        )
    )

    assert "Model error" in html
    assert "unreachable" not in html


async def test_the_live_view_offers_settings_after_a_refused_key() -> None:
    _, events = await recorded_ending(REFUSED_KEY)
    view = RunView(str(Run().pk))

    html = "".join(view.render(event) for event in events)

    assert SETTINGS in html
    assert CONTINUE not in html


def saved_run(owner: User, problem: str, text: str) -> Run:
    conversation = conversation_create(owner=owner)
    user = Message.objects.create(conversation=conversation, seq=1, role=Role.USER, content="Q?")
    run = Run.objects.create(
        conversation=conversation,
        status=RunStatus.FINISHED,
        reason="provider_error",
        user_message=user,
    )
    metadata = {
        "severity": "error",
        "metric": "attempts",
        "value": 1,
        "limit": 4,
        "reason": "provider_error",
        "problem": problem,
        "detail": "AuthenticationError: {...}",
    }
    Message.objects.create(
        conversation=conversation, run=run, seq=2, role=Role.SYSTEM, content=text, metadata=metadata
    )
    return run


@pytest.mark.django_db
def test_the_page_offers_settings_not_continue_after_a_refused_key(
    client: Client, alice: User
) -> None:
    run = saved_run(alice, "auth", "The provider refused the API key (401).")
    client.force_login(alice)

    page = client.get(f"/c/{run.conversation_id}/").content.decode()

    assert SETTINGS in page
    assert f"/api/runs/{run.pk}/continue/" not in page


@pytest.mark.django_db
def test_the_page_offers_continue_after_a_server_error(client: Client, alice: User) -> None:
    run = saved_run(alice, "provider_failed", "The model provider failed (500).")
    client.force_login(alice)

    page = client.get(f"/c/{run.conversation_id}/").content.decode()

    assert f'hx-post="/api/runs/{run.pk}/continue/"' in page
    assert "AuthenticationError" not in page
