"""The documents API: session or bearer token, owner-scoped, clear 400/413/404 answers."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.services import api_token_create
from knowledge.models import Document
from tests.knowledge.conftest import pdf, upload, uploaded, user_documents

pytestmark = pytest.mark.django_db


def bearer(user: User) -> dict[str, str]:
    _, raw = api_token_create(user=user, name="test")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def guide() -> Document:
    return Document.objects.get(owner__isnull=True)


def test_it_uploads_a_document_with_a_bearer_token(client: Client, alice: User) -> None:
    file = uploaded("paper.pdf", pdf(["Zebras sleep standing up."]))

    response = client.post(
        "/api/documents/", {"file": file, "title": "Zebra sleep"}, **bearer(alice)
    )

    assert response.status_code == 201
    body = response.json()
    assert set(body) == {
        "id",
        "title",
        "filename",
        "format",
        "size",
        "passages",
        "created_at",
        "builtin",
    }
    assert body["title"] == "Zebra sleep"
    assert (body["filename"], body["format"], body["passages"], body["builtin"]) == (
        "paper.pdf", "pdf", 1, False,
    )  # fmt: skip
    assert Document.objects.get(pk=body["id"]).owner == alice


def test_a_session_upload_needs_the_csrf_token(alice: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)

    refused = client.post("/api/documents/", {"file": uploaded("a.md", "# A\n\nText.")})

    assert refused.status_code == 403
    assert user_documents() == (0, 0)


def test_it_lists_the_users_documents_and_the_guide(client: Client, alice: User, bob: User) -> None:
    mine = upload(alice, "mine.md", "# Mine\n\nText.")
    upload(bob, "bobs.md", "# Bob's\n\nText.")
    client.force_login(alice)

    body = client.get("/api/documents/").json()

    assert [(d["id"], d["builtin"]) for d in body["documents"]] == [
        (mine.pk, False),
        (guide().pk, True),
    ]


def test_it_shows_a_document_with_its_text(client: Client, alice: User) -> None:
    document = upload(alice, "notes.txt", "Zebras are striped.")
    client.force_login(alice)

    body = client.get(f"/api/documents/{document.pk}/").json()

    assert body["text"] == "Zebras are striped."
    assert body["id"] == document.pk


def test_it_deletes_a_document(client: Client, alice: User) -> None:
    document = upload(alice, "notes.txt", "Zebras are striped.")

    response = client.delete(f"/api/documents/{document.pk}/", **bearer(alice))

    assert response.status_code == 204
    assert user_documents() == (0, 0)


def test_the_guide_can_be_read_but_not_deleted(client: Client, alice: User) -> None:
    client.force_login(alice)

    assert "Max iterations" in client.get(f"/api/documents/{guide().pk}/").json()["text"]
    response = client.delete(f"/api/documents/{guide().pk}/")

    assert response.status_code == 400
    assert response.json() == {"error": "The built-in guide cannot be deleted."}
    assert Document.objects.filter(owner__isnull=True).count() == 1


@pytest.mark.parametrize("method", ["get", "delete"])
def test_another_users_document_answers_404(
    client: Client, alice: User, bob: User, method: str
) -> None:
    document = upload(bob, "bobs.md", "# Bob's\n\nText.")
    client.force_login(alice)

    response = getattr(client, method)(f"/api/documents/{document.pk}/")

    assert response.status_code == 404
    assert response.json() == {"error": "No such document."}
    assert Document.objects.filter(pk=document.pk).exists()


@pytest.mark.parametrize(
    "bad_id", ["abc", "-1", "0", "1.5", "99999999999999999999999", "%E2%91%A0"]
)
def test_an_id_that_cannot_be_a_document_answers_404(
    client: Client, alice: User, bad_id: str
) -> None:
    client.force_login(alice)

    assert client.get(f"/api/documents/{bad_id}/").status_code == 404
    assert client.delete(f"/api/documents/{bad_id}/").status_code == 404


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "Choose a file to upload"),
        ({"file": uploaded("deck.key", b"\x00\x01")}, "deck.key is not a file Oracle can read"),
        ({"file": uploaded("empty.txt", b"")}, "empty.txt is empty."),
        ({"file": uploaded("scan.pdf", pdf([]))}, "no text to search"),
        ({"file": uploaded("bad.pdf", b"%PDF-1.4 broken")}, "bad.pdf could not be read"),
    ],
)
def test_a_file_that_cannot_be_added_answers_400_and_changes_nothing(
    client: Client, alice: User, data: dict[str, Any], message: str
) -> None:
    client.force_login(alice)

    response = client.post("/api/documents/", data)

    assert response.status_code == 400
    assert message in response.json()["errors"]["file"][0]
    assert user_documents() == (0, 0)


def test_a_title_too_long_answers_400_on_the_title(client: Client, alice: User) -> None:
    client.force_login(alice)

    response = client.post(
        "/api/documents/", {"file": uploaded("a.md", "Text"), "title": "x" * 201}
    )

    assert response.status_code == 400
    assert response.json() == {"errors": {"title": ["At most 200 characters."]}}


@pytest.mark.parametrize(
    ("size", "message"),
    [
        (1024 * 1024 + 1, "big.txt is 1.1 MB; files can be at most 1 MB."),
        # Far over: refused from the request's length, before its body is parsed.
        (3 * 1024 * 1024, "The upload is 3.1 MB; files can be at most 1 MB."),
    ],
)
def test_a_file_too_large_answers_413_with_the_limit(
    client: Client, alice: User, settings: Any, size: int, message: str
) -> None:
    settings.ORACLE_MAX_UPLOAD_BYTES = 1024 * 1024

    response = client.post(
        "/api/documents/", {"file": uploaded("big.txt", b"a" * size)}, **bearer(alice)
    )

    assert response.status_code == 413
    assert response.json() == {"errors": {"file": [message]}}
    assert user_documents() == (0, 0)


def test_the_api_needs_a_user(client: Client) -> None:
    assert client.get("/api/documents/").status_code == 401
    assert client.get("/api/documents/", HTTP_AUTHORIZATION="Bearer nope").status_code == 401


def test_other_methods_answer_405(client: Client, alice: User) -> None:
    client.force_login(alice)

    assert client.put("/api/documents/").status_code == 405
    assert client.patch(f"/api/documents/{guide().pk}/").status_code == 405
