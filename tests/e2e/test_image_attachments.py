"""An image attached to a message, on the real stack: the worker loads it from the user's
documents and, for a model LiteLLM says sees images, the provider's request carries it
beside the message's text (an OpenAI-style image_url part, its bytes in a data: URL),
in this turn and the next; a model that cannot see images gets the note saying so, and
no image."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from PIL import Image

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_runs_api import wait_until_finished
from tests.redis_dbs import SCALE_OUT_REDIS_DB
from tests.stack import OracleStack

SEES = "openai/gpt-4o-mini"  # in LiteLLM's map, a model that takes images
BLIND = "openai/fake-model"  # one LiteLLM knows nothing of


@pytest.fixture(scope="module")
def vision(
    tmp_path_factory: pytest.TempPathFactory, fake_provider: FakeServer
) -> Iterator[OracleStack]:
    """The whole product calling the fake provider as a model that sees images (on a
    Redis database of its own: the session's stack may be running beside it)."""
    oracle = OracleStack(
        tmp_path_factory.mktemp("vision"),
        redis_db=SCALE_OUT_REDIS_DB,
        **{**processes.model_env(fake_provider), "ORACLE_MODEL": SEES},
        ORACLE_MODELS=f"{SEES},{BLIND}",
    )
    oracle.start()
    try:
        yield oracle
    finally:
        oracle.stop()


def a_picture() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 120, 40)).save(out, format="PNG")
    return out.getvalue()


def ask(client: httpx.Client, question: str, documents: list[int]) -> None:
    conversation = client.post("/api/conversations/", json={}).json()["id"]
    asked(client, conversation, question, documents)


def asked(client: httpx.Client, conversation: str, question: str, documents: list[int]) -> None:
    posted = client.post(
        f"/api/conversations/{conversation}/messages/",
        json={"content": question, "documents": documents},
    )
    assert posted.status_code == 202, posted.text
    # A new worker's first run imports LiteLLM (seconds, more on a busy machine).
    assert wait_until_finished(client, posted.json()["run_id"], 60)["reason"] == "completed"


def request_with(fake_provider: FakeServer, words: str) -> list[dict[str, Any]]:
    (request,) = [r for r in fake_provider.requests if words in str(r["messages"][-1])]
    return request["messages"]


def test_the_provider_gets_the_image_beside_the_message(
    vision: OracleStack, fake_provider: FakeServer
) -> None:
    client = vision.client(vision.create_user("iris"))
    data = a_picture()
    uploaded = client.post("/api/documents/", files={"file": ("lions.png", data, "image/png")})
    assert uploaded.status_code == 201, uploaded.text
    lions = uploaded.json()["id"]
    fake_provider.set_script([{"text": ["An orange square."]}], repeat_last=True)
    conversation = client.post("/api/conversations/", json={}).json()["id"]

    asked(client, conversation, "What is this? (iris)", [lions])
    asked(client, conversation, "And its colour? (iris)", [])

    url = "data:image/png;base64," + base64.b64encode(data).decode()
    note = (
        f"What is this? (iris)\n\n[The user attached: lions (image, document id {lions}); "
        "the image is shown to you with this message.]"
    )
    first = request_with(fake_provider, "What is this? (iris)")
    assert first[-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": note},
            {"type": "image_url", "image_url": {"url": url}},
        ],
    }
    later = request_with(fake_provider, "And its colour? (iris)")
    assert later[1] == first[-1]  # the next turn is shown it again, in the history
    assert later[-1] == {"role": "user", "content": "And its colour? (iris)"}


def test_a_model_that_cannot_see_images_is_told_so_and_sent_none(
    vision: OracleStack, fake_provider: FakeServer
) -> None:
    client = vision.client(vision.create_user("blake"))
    assert client.patch("/api/settings/", json={"model": BLIND}).status_code == 200
    uploaded = client.post(
        "/api/documents/", files={"file": ("lions.png", a_picture(), "image/png")}
    )
    lions = uploaded.json()["id"]
    fake_provider.set_script([{"text": ["I cannot see it."]}], repeat_last=True)

    ask(client, "What is this? (blake)", [lions])

    (message,) = request_with(fake_provider, "(blake)")[-1:]
    assert message == {
        "role": "user",
        "content": f"What is this? (blake)\n\n[The user attached: lions (image, document id "
        f"{lions}); the image is not shown to you (this model cannot see images): say so, and "
        "do not guess what it shows.]",
    }
    assert "base64" not in str(fake_provider.requests[-1])
