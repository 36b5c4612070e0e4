"""Files attached from the composer: uploaded into the user's documents (refused as the
Documents page refuses them, saving nothing), sent with the message, which records
them, shows them, and tells the model about them. The API attaches documents already
uploaded, the user's own only."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from chat.models import Message, Run
from chat.services import conversation_create, message_edit, message_post
from knowledge.models import Document
from knowledge.services import document_upload
from runs.runner import claim

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
NOTES = "# Zebra notes\n\n## Rest\n\nZebras sleep standing up, in short naps.\n"
NOTE = (
    "[The user attached: Zebra notes (document id {}); "
    "read it with read_document or search_documents.]"
)


def a_file(name: str = "zebras.md", content: bytes | str = NOTES, kind: str = "text/markdown"):
    data = content.encode() if isinstance(content, str) else content
    return SimpleUploadedFile(name, data, content_type=kind)


def notes_of(user: User, title: str = "") -> Document:
    return document_upload(owner=user, file=a_file(), title=title)


def logged_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def post_json(client: Client, path: str, data: object) -> Any:
    return client.post(path, json.dumps(data), content_type="application/json")


def test_an_attached_file_joins_your_documents_and_shows_as_a_removable_chip(
    client: Client, alice: User
) -> None:
    response = logged_in(client, alice).post("/attachments/", {"file": a_file()})

    assert response.status_code == 201
    document = Document.objects.get(owner=alice)
    assert document.title == "Zebra notes" and document.passage_count > 0
    chip = response.content.decode()
    assert f'<input type="hidden" name="documents" value="{document.pk}">' in chip
    assert f'href="/documents/{document.pk}/"' in chip and "Zebra notes" in chip
    assert 'aria-label="Remove Zebra notes"' in chip


@pytest.mark.parametrize(
    ("upload", "status"),
    [
        (lambda: a_file("slides.pptx", b"PK\x03\x04" + b"\0" * 64, "application/zip"), 400),
        (lambda: a_file("photo.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png"), 400),
        (lambda: a_file("empty.txt", "", "text/plain"), 400),
        (lambda: a_file("big.md", "Zebras. " * 400), 413),
    ],
    ids=["wrong-type", "fake-image", "empty", "too-large"],
)
def test_a_file_the_documents_page_refuses_is_refused_alike_and_nothing_is_saved(
    client: Client, alice: User, settings: Any, upload: Any, status: int
) -> None:
    settings.ORACLE_MAX_UPLOAD_BYTES = 1024
    logged_in(client, alice)

    response = client.post("/attachments/", {"file": upload()})

    assert response.status_code == status
    said = client.post("/api/documents/", {"file": upload()}).json()["errors"]["file"][0]
    assert response.content.decode() == said  # the Documents page's own words
    assert not Document.objects.filter(owner=alice).exists()
    assert not Message.objects.exists()


def test_no_file_is_a_clear_error(client: Client, alice: User) -> None:
    response = logged_in(client, alice).post("/attachments/", {})

    assert response.status_code == 400
    assert "Choose a file" in response.content.decode()


def test_the_composer_sends_the_message_with_its_attachments(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    document = notes_of(alice)
    logged_in(client, alice)

    response = client.post(
        f"/c/{conversation.id}/messages/",
        {"content": "How do zebras sleep?", "documents": [str(document.pk)]},
        **HTMX,
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert 'hx-swap-oob="innerHTML:#composer-error"></div>' in html  # sent, not refused
    message = Message.objects.get(conversation=conversation)
    assert message.metadata["documents"] == [{"id": document.pk, "title": "Zebra notes"}]
    link = f'<a class="attachment" href="/documents/{document.pk}/" target="_blank"'
    assert link in html  # the bubble shows it
    assert link in client.get(f"/c/{conversation.id}/").content.decode()  # and the page


def test_the_first_page_starts_a_conversation_with_attachments(client: Client, alice: User) -> None:
    document = notes_of(alice)

    logged_in(client, alice).post(
        "/c/new/", {"content": "How do zebras sleep?", "documents": [str(document.pk)]}
    )

    message = Message.objects.get(conversation__owner=alice)
    assert message.metadata["documents"] == [{"id": document.pk, "title": "Zebra notes"}]


def test_the_model_is_told_what_was_attached_and_how_to_read_it(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    document = notes_of(alice)

    _, run = message_post(
        conversation=conversation, content="How do zebras sleep?", documents=[document.pk]
    )
    job = claim(str(run.pk))

    assert job is not None
    assert job.question == f"How do zebras sleep?\n\n{NOTE.format(document.pk)}"


def test_a_later_turn_still_sees_what_an_earlier_message_attached(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    document = notes_of(alice)
    _, first = message_post(conversation=conversation, content="Read this", documents=[document.pk])
    Run.objects.filter(pk=first.pk).update(status="finished")

    _, second = message_post(conversation=conversation, content="And how long do they sleep?")
    job = claim(str(second.pk))

    assert job is not None
    assert job.history[0]["content"] == f"Read this\n\n{NOTE.format(document.pk)}"
    assert job.question == "And how long do they sleep?"


def test_an_edited_message_keeps_its_attachments(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    document = notes_of(alice)
    message, run = message_post(
        conversation=conversation, content="Zebras?", documents=[document.pk]
    )
    Run.objects.filter(pk=run.pk).update(status="finished")

    edited, _ = message_edit(message=message, content="How do zebras sleep?")

    assert edited.metadata["documents"] == [{"id": document.pk, "title": "Zebra notes"}]


def test_the_api_attaches_documents_uploaded_before(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    document = notes_of(alice)

    response = post_json(
        logged_in(client, alice),
        f"/api/conversations/{conversation.id}/messages/",
        {"content": "How do zebras sleep?", "documents": [document.pk]},
    )

    assert response.status_code == 202
    shown = client.get(f"/api/conversations/{conversation.id}/").json()["messages"][0]
    assert shown["metadata"]["documents"] == [{"id": document.pk, "title": "Zebra notes"}]


def test_the_api_refuses_another_users_document_and_saves_nothing(
    client: Client, alice: User, bob: User
) -> None:
    conversation = conversation_create(owner=alice)
    mine, theirs = notes_of(alice), notes_of(bob)

    response = post_json(
        logged_in(client, alice),
        f"/api/conversations/{conversation.id}/messages/",
        {"content": "How do zebras sleep?", "documents": [mine.pk, theirs.pk]},
    )

    assert response.status_code == 400
    assert response.json() == {
        "errors": {"documents": [f"You have no document with the id {theirs.pk}."]}
    }
    assert not Message.objects.exists() and not Run.objects.exists()


@pytest.mark.parametrize(
    ("documents", "said"),
    [
        ("12", "A list of the ids of your documents, e.g. [12, 15]."),
        ([True], "A list of the ids of your documents, e.g. [12, 15]."),
        (["twelve"], "A list of the ids of your documents, e.g. [12, 15]."),
        ([1.5], "A list of the ids of your documents, e.g. [12, 15]."),
        (list(range(1, 12)), "At most 10 documents to a message."),
        ([2**70], "You have no document with the id 1180591620717411303424."),
    ],
    ids=["not-a-list", "boolean", "word", "fraction", "too-many", "huge"],
)
def test_the_api_refuses_what_is_not_a_list_of_document_ids(
    client: Client, alice: User, documents: object, said: str
) -> None:
    conversation = conversation_create(owner=alice)

    response = post_json(
        logged_in(client, alice),
        f"/api/conversations/{conversation.id}/messages/",
        {"content": "Hello", "documents": documents},
    )

    assert response.status_code == 400
    assert response.json() == {"errors": {"documents": [said]}}
    assert not Message.objects.exists()


def test_the_built_in_guide_is_not_yours_to_attach(client: Client, alice: User) -> None:
    from knowledge.services import ensure_guide

    guide = ensure_guide()
    conversation = conversation_create(owner=alice)

    response = post_json(
        logged_in(client, alice),
        f"/api/conversations/{conversation.id}/messages/",
        {"content": "Hello", "documents": [guide.pk]},
    )

    assert response.status_code == 400
    assert not Message.objects.exists()


def test_a_document_attached_twice_is_listed_once(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    document = notes_of(alice)

    message, _ = message_post(
        conversation=conversation, content="Hi", documents=[document.pk, str(document.pk)]
    )

    assert message.metadata["documents"] == [{"id": document.pk, "title": "Zebra notes"}]
