"""Images as documents: PNG, JPEG, GIF and WebP are taken (the Documents page, its API
and the composer's Attach alike) when Pillow finds them to be what their names say;
anything else named as an image is refused in plain words and nothing is saved. An
image is listed as one, found by its name, and shown on its page, from a view that
serves its bytes to its owner alone."""

# ruff: noqa: RUF001 (an image's size is written with the multiplication sign, as people read it)
from __future__ import annotations

import io
from typing import Any

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client
from PIL import Image

from knowledge import selectors
from knowledge.extraction import DocumentError, FileTooLarge, extract
from knowledge.models import Document, DocumentImage, Passage
from tests.knowledge.conftest import index_is_consistent, upload, uploaded

pytestmark = pytest.mark.django_db


def picture(kind: str = "PNG", size: tuple[int, int] = (64, 48)) -> bytes:
    """A small image of `kind`, made here."""
    out = io.BytesIO()
    Image.new("RGB", size, (200, 120, 40)).save(out, format=kind)
    return out.getvalue()


@pytest.fixture
def alice_client(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client


@pytest.mark.parametrize(
    ("name", "kind", "media_type", "label"),
    [
        ("lions.png", "PNG", "image/png", "PNG"),
        ("lions.jpg", "JPEG", "image/jpeg", "JPEG"),
        ("lions.jpeg", "JPEG", "image/jpeg", "JPEG"),
        ("lions.gif", "GIF", "image/gif", "GIF"),
        ("lions.webp", "WEBP", "image/webp", "WebP"),
    ],
)
def test_an_image_becomes_a_document_found_by_its_name(
    alice: User, name: str, kind: str, media_type: str, label: str
) -> None:
    data = picture(kind, (640, 480))

    document = upload(alice, name, data)

    assert (document.format, document.title, document.size) == ("image", "lions", len(data))
    assert document.text == f"Image {name} (lions), 640 × 480 {label}"
    assert document.passage_count == Passage.objects.filter(document=document).count() == 1
    image = DocumentImage.objects.get(document=document)
    assert (image.media_type, image.width, image.height) == (media_type, 640, 480)
    assert bytes(image.data) == data
    (hit,) = selectors.search_passages(user=alice, query="lions")
    assert hit.document_id == document.pk
    index_is_consistent()


def test_without_an_extension_the_content_type_says_it_is_an_image(alice: User) -> None:
    from knowledge.services import document_upload

    document = document_upload(owner=alice, file=uploaded("camera", picture(), "image/png"))

    assert document.format == "image" and document.text == "Image camera, 64 × 48 PNG"


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        (
            "photo.png",
            b"\x89PNG\r\n\x1a\n" + b"\0" * 64,
            "photo.png is not a PNG image: Oracle could not read it as one (a damaged file, "
            "or another kind of file renamed).",
        ),
        (
            "notes.jpg",
            b"Zebras sleep standing up.",
            "notes.jpg is not a JPEG image: Oracle could not read it as one (a damaged file, "
            "or another kind of file renamed).",
        ),
        (
            "cat.png",
            picture("GIF"),
            "cat.png is a GIF image, not a PNG one: name it cat.gif and upload it again.",
        ),
        (
            "scan.webp",
            picture("BMP"),
            "scan.webp is not a WebP image: Oracle could not read it as one (a damaged file, "
            "or another kind of file renamed).",
        ),
        ("blank.gif", b"", "blank.gif is empty."),
    ],
    ids=["fake-png", "text-as-jpeg", "gif-as-png", "bmp-as-webp", "empty"],
)
def test_a_file_named_as_an_image_that_is_not_one_is_refused_and_nothing_is_saved(
    alice: User, name: str, data: bytes, said: str
) -> None:
    with pytest.raises(DocumentError) as refused:
        upload(alice, name, data)

    assert str(refused.value) == said
    assert not Document.objects.filter(owner=alice).exists()
    assert not DocumentImage.objects.exists() and not Passage.objects.filter(document__owner=alice)


def test_an_image_with_too_many_pixels_is_refused(alice: User, monkeypatch: Any) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # Pillow's bomb limit, made small

    with pytest.raises(DocumentError, match=r"lions\.png has too many pixels for Oracle to take"):
        upload(alice, "lions.png", picture("PNG", (100, 100)))

    assert not Document.objects.filter(owner=alice).exists()


def test_an_image_over_the_size_limit_is_refused(alice: User, settings: Any) -> None:
    settings.ORACLE_MAX_UPLOAD_BYTES = 100

    with pytest.raises(FileTooLarge):
        upload(alice, "lions.png", picture("PNG", (300, 300)))

    assert not Document.objects.filter(owner=alice).exists()


def test_no_text_is_ever_extracted_from_an_image() -> None:
    with pytest.raises(DocumentError, match=r"lions\.png is an image: it has no text to extract"):
        extract(picture(), filename="lions.png")


def test_the_documents_page_takes_images_and_lists_them_as_images(
    alice_client: Client, alice: User
) -> None:
    response = alice_client.post(
        "/documents/", {"file": uploaded("lions.png", picture(), "image/png")}, follow=True
    )

    page = BeautifulSoup(response.content, "html.parser")
    document = Document.objects.get(owner=alice)
    assert "Added lions (1 passages)." in page.get_text()
    row = page.select_one(f"#document-{document.pk}")
    assert row.select_one(".document-file").get_text() == "Image · lions.png · 64 × 48"
    assert row.select_one("img.document-thumb")["src"] == f"/documents/{document.pk}/image/"
    chooser = page.select_one("#upload-file")
    assert {".png", ".jpg", ".jpeg", ".gif", ".webp", "image/png", "image/webp"} <= set(
        chooser["accept"].split(",")
    )
    assert "or an image (.png, .jpg, .gif, .webp), up to 5 MB each" in page.get_text()


def test_a_fake_image_is_refused_by_the_page_and_nothing_is_saved(alice_client: Client) -> None:
    fake = uploaded("photo.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png")

    response = alice_client.post("/documents/", {"file": fake}, follow=True)

    assert "photo.png is not a PNG image" in response.content.decode()
    assert not Document.objects.filter(owner__isnull=False).exists()


def test_an_image_documents_page_shows_the_image(alice_client: Client, alice: User) -> None:
    document = upload(alice, "lions.png", picture("PNG", (640, 480)))

    page = BeautifulSoup(alice_client.get(f"/documents/{document.pk}/").content, "html.parser")

    shown = page.select_one(".document-picture img")
    assert shown["src"] == f"/documents/{document.pk}/image/"
    assert (shown["alt"], shown["width"], shown["height"]) == ("lions", "640", "480")
    assert "Image · lions.png · 640 × 480 pixels" in page.select_one("header .muted").get_text()
    assert page.select_one(".document-text").get_text() == "Image lions.png (lions), 640 × 480 PNG"


@pytest.mark.parametrize(("kind", "media_type"), [("PNG", "image/png"), ("WEBP", "image/webp")])
def test_the_image_is_served_to_its_owner_as_its_own_type(
    alice_client: Client, alice: User, kind: str, media_type: str
) -> None:
    data = picture(kind)
    document = upload(alice, f"lions.{kind.lower()}", data)

    response = alice_client.get(f"/documents/{document.pk}/image/")

    assert response.status_code == 200
    assert response.content == data
    assert response["Content-Type"] == media_type
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"].startswith("inline;")
    assert "private" in response["Cache-Control"]


def test_another_users_image_answers_404(alice_client: Client, bob: User) -> None:
    theirs = upload(bob, "lions.png", picture())

    assert alice_client.get(f"/documents/{theirs.pk}/image/").status_code == 404
    assert alice_client.get(f"/documents/{theirs.pk}/").status_code == 404


@pytest.mark.parametrize("bad_id", ["abc", "0", "99999999999999999999999"])
def test_a_document_that_is_not_an_image_has_no_image(
    alice_client: Client, alice: User, bad_id: str
) -> None:
    notes = upload(alice, "notes.md", "# Notes\n\nText.")
    guide = Document.objects.get(owner__isnull=True)

    for document_id in (notes.pk, guide.pk, bad_id):
        assert alice_client.get(f"/documents/{document_id}/image/").status_code == 404


def test_the_image_needs_a_login(client: Client, alice: User) -> None:
    document = upload(alice, "lions.png", picture())

    response = client.get(f"/documents/{document.pk}/image/")

    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_the_api_takes_an_image_and_says_what_it_is(client: Client, alice: User) -> None:
    client.force_login(alice)
    client.get("/settings/")  # the CSRF cookie
    token = client.cookies["csrftoken"].value

    response = client.post(
        "/api/documents/",
        {"file": uploaded("lions.gif", picture("GIF", (32, 16)), "image/gif")},
        HTTP_X_CSRFTOKEN=token,
    )

    assert response.status_code == 201, response.content
    made = response.json()
    image = {"media_type": "image/gif", "width": 32, "height": 16}
    assert made["format"] == "image" and made["passages"] == 1
    assert made["image"] == {**image, "url": f"/documents/{made['id']}/image/"}
    listed = client.get("/api/documents/").json()["documents"]
    assert listed[0]["image"] == made["image"] and "image" not in listed[-1]  # the guide
    detail = client.get(f"/api/documents/{made['id']}/").json()
    assert detail["text"] == "Image lions.gif (lions), 32 × 16 GIF"
    assert detail["image"] == made["image"]


def test_the_api_refuses_a_fake_image_and_saves_nothing(client: Client, alice: User) -> None:
    client.force_login(alice)
    client.get("/settings/")
    token = client.cookies["csrftoken"].value

    response = client.post(
        "/api/documents/",
        {"file": uploaded("photo.png", b"not a picture at all", "image/png")},
        HTTP_X_CSRFTOKEN=token,
    )

    assert response.status_code == 400
    assert response.json()["errors"]["file"][0].startswith("photo.png is not a PNG image")
    assert not Document.objects.filter(owner=alice).exists()
