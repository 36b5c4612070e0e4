"""Images attached from the composer: a chip with a thumbnail, kept on the message as
images (shown as thumbnails); a model LiteLLM says sees images is told it is shown them
and is given their bytes by the worker, in this turn and later ones, while any other is
told it cannot see them. The API attaches images by id like any document."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.models import Message, Run
from chat.services import conversation_create, message_post
from knowledge.models import Document
from knowledge.services import document_upload
from runs.runner import claim
from tests.chat.test_attachments import HTMX, a_file, logged_in, notes_of, post_json

pytestmark = pytest.mark.django_db
SEES = "openai/gpt-4o-mini"  # LiteLLM's map says it takes images
SHOWN = (
    "[The user attached: lions (image, document id {}); the image is shown to you with this "
    "message.]"
)
NOT_SHOWN = (
    "[The user attached: lions (image, document id {}); the image is not shown to you (this "
    "model cannot see images): say so, and do not guess what it shows.]"
)


def a_picture() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 120, 40)).save(out, format="PNG")
    return out.getvalue()


def lions_of(user: User) -> Document:
    return document_upload(owner=user, file=a_file("lions.png", a_picture(), "image/png"))


def test_an_attached_image_shows_as_a_chip_with_its_thumbnail(client: Client, alice: User) -> None:
    response = logged_in(client, alice).post(
        "/attachments/", {"file": a_file("lions.png", a_picture(), "image/png")}
    )

    assert response.status_code == 201
    document = Document.objects.get(owner=alice)
    assert document.format == "image"
    chip = response.content.decode()
    assert f'<img class="attachment-thumb" src="/documents/{document.pk}/image/" alt="">' in chip
    assert f'<input type="hidden" name="documents" value="{document.pk}">' in chip


def test_attach_offers_images_and_says_so(client: Client, alice: User) -> None:
    page = logged_in(client, alice).get("/").content.decode()

    assert ".png,.jpg,.jpeg,.gif,.webp," in page and "image/webp" in page
    assert "PDF (.pdf) or an image (.png, .jpg, .gif, .webp), up to 5 MB" in page


def test_a_message_keeps_which_attachments_are_images_and_shows_their_thumbnails(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    notes, lions = notes_of(alice), lions_of(alice)
    logged_in(client, alice)

    client.post(
        f"/c/{conversation.id}/messages/",
        {"content": "What is this?", "documents": [str(notes.pk), str(lions.pk)]},
        **HTMX,
    )

    message = Message.objects.get(conversation=conversation)
    assert message.metadata["documents"] == [
        {"id": notes.pk, "title": "Zebra notes"},
        {"id": lions.pk, "title": "lions", "image": True},
    ]
    page = client.get(f"/c/{conversation.id}/").content.decode()
    assert f'<img class="attachment-thumb" src="/documents/{lions.pk}/image/" alt="">' in page


def test_a_model_that_sees_images_is_told_it_is_shown_the_image_and_gets_it(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    conversation.model = SEES
    conversation.save()
    lions = lions_of(alice)
    _, run = message_post(conversation=conversation, content="What is this?", documents=[lions.pk])

    job = claim(str(run.pk))

    assert job is not None
    assert job.question == f"What is this?\n\n{SHOWN.format(lions.pk)}"
    assert list(job.pictures) == [lions.pk]
    assert (job.pictures[lions.pk].media_type, job.pictures[lions.pk].data) == (
        "image/png",
        a_picture(),
    )


def test_a_model_that_cannot_see_images_is_told_so_and_gets_none(alice: User) -> None:
    conversation = conversation_create(owner=alice)  # the offline model
    lions = lions_of(alice)
    _, run = message_post(conversation=conversation, content="What is this?", documents=[lions.pk])

    job = claim(str(run.pk))

    assert job is not None
    assert job.question == f"What is this?\n\n{NOT_SHOWN.format(lions.pk)}"
    assert job.pictures == {}


def test_a_later_turn_is_still_shown_an_earlier_image_but_not_anothers(
    alice: User, bob: User
) -> None:
    conversation = conversation_create(owner=alice)
    conversation.model = SEES
    conversation.save()
    lions = lions_of(alice)
    _, first = message_post(conversation=conversation, content="Look", documents=[lions.pk])
    Run.objects.filter(pk=first.pk).update(status="finished")
    _, second = message_post(conversation=conversation, content="What colour is it?")

    job = claim(str(second.pk))

    assert job is not None
    assert job.history[0]["content"] == f"Look\n\n{SHOWN.format(lions.pk)}"
    assert list(job.pictures) == [lions.pk]


def test_the_api_attaches_an_image_document(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    lions = lions_of(alice)

    response = post_json(
        logged_in(client, alice),
        f"/api/conversations/{conversation.id}/messages/",
        {"content": "What is this?", "documents": [lions.pk]},
    )

    assert response.status_code == 202
    shown = client.get(f"/api/conversations/{conversation.id}/").json()["messages"][0]
    assert shown["metadata"]["documents"] == [{"id": lions.pk, "title": "lions", "image": True}]
