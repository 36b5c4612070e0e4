"""The conversation WebSocket under arbitrary frames (text and binary, JSON of any shape
or none) and addresses, through the whole ASGI application: a frame always gets an
answer (an error frame when refused), the socket is never closed by an exception
(1011), and nothing in the database changes.

The consumer reads the database in threads of its own, so the rows are committed
(a transactional test) and each example starts from the same ones anyway."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from chat.consumers import MAX_FRAME_BYTES
from chat.models import Run
from oracle.asgi import application
from tests.fuzz.strategies import (
    ABSENT,
    DEEP,
    LONG,
    Parts,
    encode_json,
    fuzzing,
    hostile_text,
    json_values,
    mixed,
)
from tests.fuzz.world import World, build_world, snapshot

pytestmark = pytest.mark.django_db(transaction=True)
REPLY_SECONDS = 10  # generous: the suite shares two cores
# A page of the site itself (ALLOWED_HOSTS as the ASGI application read it at import).
SAME_ORIGIN = [(b"origin", b"http://localhost"), (b"host", b"localhost")]


@pytest.fixture(autouse=True)
def _no_flood_limit(settings: Any) -> None:
    settings.ORACLE_WS_FRAMES_PER_10S = 100_000


@pytest.fixture
def world(alice: User, bob: User) -> World:
    return build_world(alice, bob)


@pytest.fixture
def alice_cookie(alice: User) -> str:
    client = Client()
    client.force_login(alice)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


@pytest.fixture
def runner() -> Iterator[asyncio.Runner]:
    """One event loop for all the examples (the live-events hub is one per loop)."""
    with asyncio.Runner() as runner:
        yield runner


def frame_parts(world: World) -> Parts:
    """A frame: a sync (its type, run and last seq), maybe other keys, or something else
    entirely; as text or bytes. Text frames hold no lone surrogate (a text frame is UTF-8
    on the wire, and daphne refuses one that is not): JSON escapes bring them in."""
    return {
        "kind": (st.just("text"), st.just("bytes")),
        "type": (st.just("sync"), json_values),
        "run_id": (
            st.sampled_from(world.mine["run_id"]),
            st.sampled_from(world.others["run_id"]) | json_values,
        ),
        "last_seq": (st.integers(0, 5) | st.just(ABSENT), json_values),
        "other keys": (st.just({}), st.dictionaries(hostile_text, json_values, max_size=2)),
        "whole frame": (
            st.just(None),
            st.text(max_size=40).map(str.encode)
            | st.binary(max_size=40)
            | json_values.map(lambda value: json.dumps(value).encode())
            | st.sampled_from(
                [
                    b"",
                    b"null",
                    b"NaN",
                    DEEP.encode(),
                    b"x" * LONG,
                    json.dumps({"type": "sync", "run_id": "x" * MAX_FRAME_BYTES}).encode(),
                    b'{"type": "sync", "run_id": "\\ud800", "last_seq": 1e999}',
                    b'{"type": "sync", "run_id": "a\\u0000", "last_seq": -0}',
                    b'{"type": "sync", "type": "other"}',
                    '{"type": "sync", "run_id": "\ud800"}'.encode("utf-8", "surrogatepass"),
                ]
            ),
        ),
    }


def write_frame(values: dict[str, Any]) -> tuple[str, str | bytes]:
    """("text", str) or ("bytes", bytes), as the communicator sends them."""
    if values["whole frame"] is not None:
        data = values["whole frame"]
    else:
        sync = {"type": values["type"], "run_id": values["run_id"], "last_seq": values["last_seq"]}
        sent = {k: v for k, v in sync.items() if v is not ABSENT}
        data = encode_json({**values["other keys"], **sent}, "utf-8")
    if values["kind"] == "bytes":
        return "bytes", data
    return "text", data.decode(errors="replace")  # no lone surrogate in a text frame


def connection_parts(world: World, cookie: str) -> Parts:
    """A connection: its cookie, conversation and address."""
    return {
        "cookie": (st.just(cookie), st.sampled_from(["", "sessionid=\x00ÿ", cookie[:-1]])),
        "conversation": (
            st.sampled_from(world.mine["conversation_id"]),
            st.sampled_from(world.others["conversation_id"]) | hostile_text,
        ),
        "address": (st.just("/ws/conversations/{}/"), st.sampled_from(ADDRESSES)),
    }


ADDRESSES = [
    "/ws/conversations/{}/more/",
    "/ws/conversations/{}",
    "/ws/conversations//{}/",
    "/ws/",
    "/ws/nothing/",
    "/",
    "/api/skills/",
]


def is_good_sync(frame: str | bytes, runs_here: set[str]) -> bool:
    """A sync naming a run of this conversation, as the page sends it."""
    text = frame if isinstance(frame, str) else frame.decode(errors="replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(data, dict):
        return False
    run_id, last_seq = data.get("run_id"), data.get("last_seq", 0)
    return (
        data.get("type") == "sync"
        and isinstance(run_id, str)
        and run_id in runs_here
        and type(last_seq) is int
        and last_seq >= 0
        and len(text.encode()) <= MAX_FRAME_BYTES
    )


async def talk(connection: dict[str, Any], frames: list[tuple[str, str | bytes]]) -> None:
    """Connect, send the frames one by one (each gets its answer), disconnect."""
    headers = list(SAME_ORIGIN)
    if connection["cookie"]:
        headers.append((b"cookie", connection["cookie"].encode("latin-1")))
    conversation = quote(connection["conversation"][:2_000], safe="", errors="surrogatepass")
    address = connection["address"].format(conversation)
    socket = WebsocketCommunicator(application, address, headers=headers)
    connected, code = await socket.connect(timeout=REPLY_SECONDS)  # re-raises any error
    if not connected:
        assert code in (1000, 4404), code  # an unknown address or conversation
        await socket.disconnect(timeout=REPLY_SECONDS)
        return
    runs_here = {str(pk) for pk in await runs_of(connection["conversation"])}
    for kind, frame in frames:
        await socket.send_input({"type": "websocket.receive", kind: frame})
        reply = await socket.receive_output(REPLY_SECONDS)  # re-raises the consumer's error
        assert reply["type"] == "websocket.send", reply
        refused = reply["text"].startswith("{")
        if refused:
            assert json.loads(reply["text"])["type"] == "error"
        assert refused != is_good_sync(frame, runs_here), (frame, reply["text"][:200])
    await socket.disconnect(timeout=REPLY_SECONDS)


async def runs_of(conversation_id: str) -> list[Any]:
    query = Run.objects.filter(conversation_id=conversation_id).values_list("pk", flat=True)
    return await sync_to_async(lambda: list(query))()


def test_no_frame_fails_nor_changes_anything(
    world: World, alice_cookie: str, runner: asyncio.Runner
) -> None:
    before = snapshot()

    @fuzzing(50)
    @given(
        # The connection is fine three times in four, so that the frames reach the consumer.
        connection=mixed(connection_parts(world, alice_cookie), calm=0.75),
        frames=st.lists(mixed(frame_parts(world)).map(write_frame), min_size=1, max_size=4),
    )
    def fuzz(connection: dict[str, Any], frames: list[tuple[str, str | bytes]]) -> None:
        runner.run(talk(connection, frames))
        assert snapshot() == before

    fuzz()


def test_an_unknown_address_is_refused_not_an_error(runner: asyncio.Runner) -> None:
    """Found by fuzzing (/ws/conversations/<id>/more/): Channels' router raised "No route
    found" for any other address, which daphne logs as a crash and answers with a 500."""

    async def connect(address: str) -> tuple[bool, Any]:
        socket = WebsocketCommunicator(application, address, headers=SAME_ORIGIN)
        answer = await socket.connect(timeout=REPLY_SECONDS)
        await socket.disconnect(timeout=REPLY_SECONDS)
        return answer

    for address in ["/ws/nothing/", "/ws/conversations/a/b/", "/ws/conversations//", "/"]:
        assert runner.run(connect(address)) == (False, 1000), address
