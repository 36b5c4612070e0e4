"""The conversation socket fills from the database what was never pushed: a run's
batches come over Redis while it streams, and when one is lost after the others (the
run's last words, its end), the page still gets it, without a reload."""

from __future__ import annotations

import asyncio
import re

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from chat.consumers import CATCH_UP_SECONDS
from chat.models import Message, Role, Run, RunEvent, RunStatus
from chat.services import conversation_create
from oracle.asgi import application
from runs.live import publish_now

pytestmark = pytest.mark.django_db(transaction=True)
SAME_ORIGIN = [(b"origin", b"http://localhost"), (b"host", b"localhost")]


def delta(seq: int, text: str) -> dict[str, object]:
    return {"seq": seq, "type": "assistant.delta", "text": text}


@sync_to_async
def running_run(user: User) -> tuple[str, str, str]:
    conversation = conversation_create(owner=user, title="Streaming")
    message = Message.objects.create(
        conversation=conversation, seq=1, role=Role.USER, content="Question?"
    )
    run = Run.objects.create(
        conversation=conversation, status=RunStatus.RUNNING, user_message=message,
        last_event_seq=1,
    )  # fmt: skip
    RunEvent.objects.create(
        run=run, seq=1, type="run.started", data={"seq": 1, "type": "run.started"}
    )
    client = Client()
    client.force_login(user)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    return str(conversation.pk), str(run.pk), cookie


@sync_to_async
def save(run_id: str, event: dict[str, object]) -> None:
    RunEvent.objects.create(run_id=run_id, seq=event["seq"], type=event["type"], data=event)


async def seq_shown(socket: WebsocketCommunicator, seq: int, within: float) -> str:
    """The frames received until the page holds event `seq`."""
    frames = ""
    while f'data-seq="{seq}"' not in frames:
        frames += await socket.receive_from(within)
    return frames


async def test_a_batch_lost_after_pushed_ones_still_reaches_the_page(alice: User) -> None:
    conversation_id, run_id, cookie = await running_run(alice)
    socket = WebsocketCommunicator(
        application, f"/ws/conversations/{conversation_id}/",
        headers=[*SAME_ORIGIN, (b"cookie", cookie.encode())],
    )  # fmt: skip
    connected, _ = await socket.connect()
    assert connected
    await socket.send_json_to({"type": "sync", "run_id": run_id, "last_seq": 0})
    await seq_shown(socket, 1, 10)

    for seq, word in ((2, "pushed-one "), (3, "pushed-two ")):
        await save(run_id, delta(seq, word))
        batch = {"conversation_id": conversation_id, "run_id": run_id, "events": [delta(seq, word)]}
        await sync_to_async(publish_now)([batch])
    pushed = await seq_shown(socket, 3, 10)
    await save(run_id, delta(4, "never-pushed"))  # its batch lost on the way
    caught_up = await seq_shown(socket, 4, CATCH_UP_SECONDS * 3 + 5)

    assert "pushed-one" in pushed and "pushed-two" in pushed
    assert "never-pushed" in caught_up
    assert len(re.findall("never-pushed", caught_up)) == 1
    await socket.disconnect()
    await asyncio.sleep(0)
