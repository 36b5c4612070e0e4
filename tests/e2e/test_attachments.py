"""A document attached to a message, on the real stack: the worker's run tells the model
what was attached and how to read it, and another user's document cannot be attached."""

from __future__ import annotations

from agents.testing.fake_server import FakeServer
from tests.e2e.test_runs_api import wait_until_finished
from tests.stack import OracleStack

NOTES = b"# Zebra notes\n\n## Rest\n\nZebras sleep standing up, in short naps.\n"


def test_the_model_is_told_of_the_attached_document_and_how_to_read_it(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    client = stack.client(stack.create_user("attie"))
    uploaded = client.post("/api/documents/", files={"file": ("zebras.md", NOTES, "text/markdown")})
    assert uploaded.status_code == 201, uploaded.text
    document = uploaded.json()["id"]
    fake_provider.set_script([{"text": ["They sleep standing up."]}], repeat_last=True)
    conversation = client.post("/api/conversations/", json={}).json()["id"]

    posted = client.post(
        f"/api/conversations/{conversation}/messages/",
        json={"content": "How do zebras sleep? (attie)", "documents": [document]},
    )
    assert posted.status_code == 202, posted.text
    assert wait_until_finished(client, posted.json()["run_id"])["reason"] == "completed"

    (asked,) = [r["messages"] for r in fake_provider.requests if "(attie)" in str(r["messages"])]
    assert asked[-1] == {
        "role": "user",
        "content": "How do zebras sleep? (attie)\n\n[The user attached: Zebra notes (document id "
        f"{document}); read it with read_document or search_documents.]",
    }


def test_another_users_document_cannot_be_attached(stack: OracleStack) -> None:
    owner = stack.client(stack.create_user("otis"))
    other = stack.client(stack.create_user("olga"))
    theirs = owner.post("/api/documents/", files={"file": ("zebras.md", NOTES, "text/markdown")})
    conversation = other.post("/api/conversations/", json={}).json()["id"]

    posted = other.post(
        f"/api/conversations/{conversation}/messages/",
        json={"content": "Read this", "documents": [theirs.json()["id"]]},
    )

    assert posted.status_code == 400
    assert posted.json()["errors"]["documents"] == [
        f"You have no document with the id {theirs.json()['id']}."
    ]
    assert other.get(f"/api/conversations/{conversation}/").json()["messages"] == []
