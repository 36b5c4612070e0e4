"""The Documents page: the list with the guide marked Built-in, uploads without
JavaScript, deletion, and other users' documents answering 404."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User
from django.test import Client

from knowledge.models import Document
from tests.knowledge.conftest import upload, uploaded, user_documents

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice_client(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client


def test_the_page_lists_documents_and_marks_the_guide_built_in(
    alice_client: Client, alice: User, bob: User
) -> None:
    document = upload(alice, "notes.md", "# Zebra notes\n\n" + "Stripes. " * 200)
    upload(bob, "bob.md", "# Bob's diary\n\nText.")

    page = alice_client.get("/documents/").content.decode()

    assert "Zebra notes" in page
    assert "1.8\xa0KB" in page  # the size, as people read it
    assert f'action="/documents/{document.pk}/delete/"' in page
    assert "Oracle user guide" in page and "Built-in" in page
    assert "Bob&#x27;s diary" not in page and "Bob's diary" not in page
    assert page.count("Delete<span") == 1  # the guide has no Delete button
    assert 'data-max-bytes="5242880"' in page and "up to 5 MB each" in page


def test_a_user_without_documents_is_told_so(alice_client: Client) -> None:
    page = alice_client.get("/documents/").content.decode()

    assert "You have not added any documents yet." in page


def test_the_page_needs_a_login(client: Client) -> None:
    response = client.get("/documents/")

    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_the_menu_links_to_the_documents(alice_client: Client) -> None:
    assert 'href="/documents/"' in alice_client.get("/settings/").content.decode()


def test_a_form_upload_without_javascript_adds_the_document(alice_client: Client) -> None:
    response = alice_client.post(
        "/documents/", {"file": uploaded("zebras.md", "# Zebras\n\nStripes.")}, follow=True
    )

    assert "Added Zebras (1 passages)." in response.content.decode()
    assert user_documents() == (1, 1)


def test_a_form_upload_of_several_files_says_what_became_of_each(alice_client: Client) -> None:
    files = [uploaded("a.exe", b"MZ\x00"), uploaded("zebras.md", "# Zebras\n\nStripes.")]

    response = alice_client.post("/documents/", {"file": files}, follow=True)

    assert "a.exe is not a file Oracle can read" in response.content.decode()
    assert "Added Zebras (1 passages)." in response.content.decode()
    assert user_documents() == (1, 1)


def test_the_list_alone_is_what_htmx_refreshes(alice_client: Client, alice: User) -> None:
    upload(alice, "notes.md", "# Zebra notes\n\nText.")

    fragment = alice_client.get("/documents/list/").content.decode()

    assert "Zebra notes" in fragment and "<html" not in fragment


def test_a_document_page_shows_its_text_by_passage(alice_client: Client, alice: User) -> None:
    document = upload(alice, "notes.md", "# Zebra notes\n\n## Habitat\n\nThe savanna & <grass>.")

    page = alice_client.get(f"/documents/{document.pk}/").content.decode()

    assert "The savanna &amp; &lt;grass&gt;." in page
    assert 'href="#passage-0">Habitat</a>' in page
    assert 'id="passage-0"' in page  # where that link goes


MARKDOWN = """# Zebra notes

## Habitat

The **savanna** is _wide_, see [the atlas](https://example.com/atlas).

- grass
- acacia

```python
stripes = 2
```

| animal | legs |
| --- | --- |
| zebra | 4 |

## Diet

Grass, mostly.
"""


def test_a_markdown_document_page_renders_its_markdown(alice_client: Client, alice: User) -> None:
    document = upload(alice, "notes.md", MARKDOWN)

    page = alice_client.get(f"/documents/{document.pk}/").content.decode()

    assert "<strong>savanna</strong> is <em>wide</em>" in page
    assert ">the atlas</a>" in page and 'href="https://example.com/atlas"' in page
    assert "<li>grass</li>" in page and "<li>acacia</li>" in page
    assert '<span class="code-lang">python</span>' in page
    assert '<span class="n">stripes</span>' in page  # highlighted
    assert "<td>zebra</td>" in page
    assert "<h2>" in page and "**savanna**" not in page and "```" not in page
    # The contents still lead to each section.
    assert 'href="#passage-0">Habitat</a>' in page and 'href="#passage-1">Diet</a>' in page
    assert page.index('id="passage-0"') < page.index("savanna") < page.index('id="passage-1"')


def _cited(page: str) -> list[str]:
    """The words the page highlights, mark by mark."""
    return [mark.get_text() for mark in BeautifulSoup(page, "html.parser")("mark")]


def test_a_citation_opens_the_document_with_the_passage_highlighted(
    alice_client: Client, alice: User
) -> None:
    document = upload(alice, "notes.md", MARKDOWN)
    quoted = "The **savanna** is _wide_, see [the atlas](https://example.com/atlas)."
    start = MARKDOWN.index(quoted)

    response = alice_client.get(
        f"/documents/{document.pk}/", {"start": start, "length": len(quoted)}
    )
    page = response.content.decode()

    assert response.status_code == 200
    assert _cited(page) == ["The ", "savanna", " is ", "wide", ", see ", "the atlas", "."]
    assert page.count('id="passage"') == 1  # where #passage scrolls to: the first
    assert '<mark class="cited" id="passage">The </mark><strong>' in page
    assert '<a href="#passage">' in page  # the page says where it is


def test_a_citation_of_plain_text_highlights_it_as_written(
    alice_client: Client, alice: User
) -> None:
    text = "Day one.\n\nZebras: 12 <counted> at dawn.\n\nDay two."
    document = upload(alice, "log.txt", text)
    start = text.index("Zebras")

    page = alice_client.get(f"/documents/{document.pk}/?start={start}&length=26").content.decode()

    assert _cited(page) == ["Zebras: 12 <counted> at dawn."[:26]]


def test_a_citation_of_the_guide_opens_it_highlighted(alice_client: Client) -> None:
    guide = Document.objects.get(owner__isnull=True)
    start = guide.text.index("Max iterations")

    page = alice_client.get(f"/documents/{guide.pk}/?start={start}&length=14").content.decode()

    assert "".join(_cited(page)) == "Max iterations"


@pytest.mark.parametrize(
    "query",
    [
        "start=-1&length=5",
        "start=0&length=0",
        "start=0&length=-3",
        "start=9999&length=5",  # past the end
        "start=abc&length=5",
        "start=1e3&length=5",
        "start=%EF%BC%91&length=5",  # a full-width digit
        "start=&length=",
        "start=5",
        "length=5",
        "start=99999999999999999999999&length=5",
        "start=0&length=99999999999999999999999",
        "start=0&start=1&length=x",
    ],
)
def test_a_citation_out_of_range_or_malformed_shows_the_document_unmarked(
    alice_client: Client, alice: User, query: str
) -> None:
    document = upload(alice, "notes.md", MARKDOWN)

    response = alice_client.get(f"/documents/{document.pk}/?{query}")

    assert response.status_code == 200
    assert "<strong>savanna</strong>" in response.content.decode()
    assert _cited(response.content.decode()) == []


def test_a_citation_running_past_the_end_highlights_to_the_end(
    alice_client: Client, alice: User
) -> None:
    document = upload(alice, "notes.md", MARKDOWN)
    start = MARKDOWN.index("Grass, mostly.")

    page = alice_client.get(f"/documents/{document.pk}/?start={start}&length=5000").content.decode()

    assert _cited(page) == ["Grass, mostly."]


def test_a_citation_of_another_users_document_answers_404(alice_client: Client, bob: User) -> None:
    document = upload(bob, "bob.md", "# Bob's diary\n\nSecret text.")

    response = alice_client.get(f"/documents/{document.pk}/?start=0&length=5")

    assert response.status_code == 404
    assert "Secret" not in response.content.decode()


def test_a_plain_text_document_stays_plain(alice_client: Client, alice: User) -> None:
    document = upload(alice, "notes.txt", "**Not bold** and <b>no tag</b>.\n\n- a line\n- another")

    page = alice_client.get(f"/documents/{document.pk}/").content.decode()

    assert "**Not bold** and &lt;b&gt;no tag&lt;/b&gt;." in page
    assert "- a line\n- another" in page  # its lines kept as they are
    assert "<strong>" not in page and "<li>" not in page


def test_a_hostile_markdown_document_renders_inert(alice_client: Client, alice: User) -> None:
    hostile = (
        "# Trap\n\n<script>alert(1)</script>\n\n[click](javascript:alert(2))\n\n"
        '<img src=x onerror=alert(3)>\n\n![x](x"onerror="alert(4))\n\n'
        '[ok](https://example.com "a\\" onmouseover=\\"alert(5)")\n'
    )
    document = upload(alice, "trap.md", hostile)

    page = alice_client.get(f"/documents/{document.pk}/").content.decode()
    text = BeautifulSoup(page, "html.parser").select_one(".document-text")

    assert text is not None and "<script>alert(1)</script>" in text.get_text()
    assert not text.find_all(["script", "img", "iframe", "object", "embed"])
    attributes = [(name, value) for tag in text.find_all(True) for name, value in tag.attrs.items()]
    assert not [name for name, _ in attributes if name.startswith("on")]
    assert not [value for name, value in attributes if "javascript" in str(value).lower()]
    assert text.find("a", href="https://example.com") is not None  # the safe link stays


def test_delete_with_htmx_answers_the_new_list(alice_client: Client, alice: User) -> None:
    document = upload(alice, "notes.md", "# Zebra notes\n\nText.")

    response = alice_client.post(f"/documents/{document.pk}/delete/", HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert "Zebra notes" not in response.content.decode()
    assert "Oracle user guide" in response.content.decode()
    assert user_documents() == (0, 0)


def test_delete_without_javascript_comes_back_to_the_page(
    alice_client: Client, alice: User
) -> None:
    document = upload(alice, "notes.md", "# Zebra notes\n\nText.")

    response = alice_client.post(f"/documents/{document.pk}/delete/")

    assert response.status_code == 302 and response["Location"] == "/documents/"
    assert user_documents() == (0, 0)


def test_the_guide_cannot_be_deleted_from_the_page(alice_client: Client) -> None:
    guide = Document.objects.get(owner__isnull=True)

    response = alice_client.post(f"/documents/{guide.pk}/delete/", follow=True)

    assert "The built-in guide cannot be deleted." in response.content.decode()
    assert Document.objects.filter(pk=guide.pk).exists()


@pytest.mark.parametrize("path", ["/documents/{id}/", "/documents/{id}/delete/"])
def test_another_users_document_answers_404(alice_client: Client, bob: User, path: str) -> None:
    document = upload(bob, "bob.md", "# Bob's diary\n\nText.")
    url = path.format(id=document.pk)

    response = alice_client.post(url) if url.endswith("delete/") else alice_client.get(url)

    assert response.status_code == 404
    assert Document.objects.filter(pk=document.pk).exists()


@pytest.mark.parametrize("bad_id", ["abc", "0", "99999999999999999999999"])
def test_an_id_that_cannot_be_a_document_answers_404(alice_client: Client, bad_id: str) -> None:
    assert alice_client.get(f"/documents/{bad_id}/").status_code == 404
    assert alice_client.post(f"/documents/{bad_id}/delete/").status_code == 404
