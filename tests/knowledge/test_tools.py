"""The tools the Oracle uses: `search_documents`, `read_document` and `list_documents`,
with the JSON contract the offline model and real models rely on."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth.models import User

from agents.tools import Tool, ToolError, ToolRegistry
from knowledge.models import Document
from knowledge.tools import document_tools
from markup.markdown import render_markdown
from tests.knowledge.conftest import under, upload

pytestmark = pytest.mark.django_db

NOTES = "# Field notes\n\n## Zebras\n\n" + "Zebras graze on the plains at dawn. " * 60


def tools_for(user: User) -> dict[str, Tool]:
    return {tool.name: tool for tool in document_tools(user.pk)}


def search(user: User, **arguments: Any) -> Any:
    return json.loads(tools_for(user)["search_documents"].function(**arguments))


def read(user: User, **arguments: Any) -> Any:
    return json.loads(tools_for(user)["read_document"].function(**arguments))


def listing(user: User, **arguments: Any) -> Any:
    return json.loads(tools_for(user)["list_documents"].function(**arguments))


def test_the_tools_describe_themselves_to_the_model(alice: User) -> None:
    tools = tools_for(alice)

    assert list(tools) == ["search_documents", "read_document", "list_documents"]
    list_schema = tools["list_documents"].schema["function"]
    assert list_schema["parameters"].get("required", []) == []
    assert set(list_schema["parameters"]["properties"]) == {"limit"}
    search_schema = tools["search_documents"].schema["function"]
    assert search_schema["parameters"]["required"] == ["query"]
    assert set(search_schema["parameters"]["properties"]) == {"query", "limit"}
    read_schema = tools["read_document"].schema["function"]
    assert read_schema["parameters"]["required"] == ["document_id"]
    assert set(read_schema["parameters"]["properties"]) == {"document_id", "start", "length"}
    assert "user guide" in search_schema["description"]
    for schema in (search_schema, read_schema, list_schema):
        for prop in schema["parameters"]["properties"].values():
            assert prop["description"]


def test_search_answers_ranked_passages_with_where_they_are(alice: User) -> None:
    document = upload(alice, "notes.md", NOTES)

    body = search(alice, query="When do zebras graze?", limit=2)

    assert body["query"] == "When do zebras graze?"
    assert len(body["results"]) == 2
    first = body["results"][0]
    assert set(first) == {"document_id", "title", "location", "start", "length", "text", "cite"}
    assert first["document_id"] == document.pk
    assert first["title"] == "Field notes"
    assert first["location"] == "Zebras"
    stored = Document.objects.get(pk=document.pk).text
    assert stored[first["start"] : first["start"] + first["length"]] == first["text"]


def test_each_result_carries_a_link_that_cites_its_passage(alice: User, client: Any) -> None:
    document = upload(alice, "notes.md", NOTES, title="Field [notes]")

    first = search(alice, query="When do zebras graze?")["results"][0]

    link = f"/documents/{document.pk}/?start={first['start']}&length={first['length']}#passage"
    assert first["cite"] == f"[*Field \\[notes\\]*, Zebras]({link})"
    client.force_login(alice)
    page = client.get(link.removesuffix("#passage")).content.decode()
    marked = "".join(re.findall(r'<mark class="cited"[^>]*>([^<]*)</mark>', page)).split()
    words = BeautifulSoup(render_markdown(first["text"]), "html.parser").get_text().split()
    assert "".join(marked) == "".join(words)  # the passage as the page renders it, all of it


def test_the_search_tool_asks_the_model_to_cite_with_the_link(alice: User) -> None:
    description = tools_for(alice)["search_documents"].schema["function"]["description"]

    assert "cite" in description and "link" in description


def test_search_finds_the_guide_for_every_user(alice: User) -> None:
    body = search(alice, query="How do I change the iteration limit?")

    first = body["results"][0]
    assert first["title"] == "Oracle user guide"
    assert first["location"] == under("Settings", "Changing a limit")
    assert "Max iterations" in first["text"]


@pytest.mark.parametrize(("asked", "given"), [(0, 1), (-5, 1), (3, 3), (50, 10)])
def test_the_search_limit_is_kept_between_1_and_10(alice: User, asked: int, given: int) -> None:
    for n in range(12):
        upload(alice, f"z{n}.md", f"# Zebra {n}\n\nZebra number {n} grazes.")

    assert len(search(alice, query="zebra grazes", limit=asked)["results"]) == given


def test_a_search_that_finds_nothing_answers_an_empty_list(alice: User) -> None:
    assert search(alice, query="xylophone quartet") == {"query": "xylophone quartet", "results": []}


@pytest.mark.parametrize("query", ["", "   ", "\n"])
def test_an_empty_query_is_an_error_the_model_reads(alice: User, query: str) -> None:
    with pytest.raises(ToolError, match="the query is empty"):
        search(alice, query=query)


def test_read_returns_a_slice_and_the_total_length(alice: User) -> None:
    document = upload(alice, "notes.md", NOTES)
    stored = Document.objects.get(pk=document.pk).text

    body = read(alice, document_id=document.pk, start=10, length=100)

    assert body == {
        "document_id": document.pk,
        "title": "Field notes",
        "start": 10,
        "length": 100,
        "total_length": len(stored),
        "text": stored[10:110],
    }
    end = read(alice, document_id=document.pk, start=len(stored) - 5)
    assert end["text"] == stored[-5:] and end["length"] == 5
    assert read(alice, document_id=document.pk)["text"] == stored[:2000]


@pytest.mark.parametrize(("asked", "given"), [(0, 1), (-1, 1), (8000, 8000), (100_000, 8000)])
def test_the_read_length_is_kept_between_1_and_8000(alice: User, asked: int, given: int) -> None:
    document = upload(alice, "long.txt", "word " * 3000)

    assert read(alice, document_id=document.pk, length=asked)["length"] == given


def test_reading_past_the_end_is_an_error(alice: User) -> None:
    document = upload(alice, "short.txt", "Just a few words.")

    with pytest.raises(ToolError, match="past the end"):
        read(alice, document_id=document.pk, start=17)
    with pytest.raises(ToolError, match="start must be 0 or more"):
        read(alice, document_id=document.pk, start=-1)


def test_another_users_document_does_not_exist_for_the_tools(alice: User, bob: User) -> None:
    secret = upload(alice, "secret.md", "# Secret\n\nThe zebra code is 1234.")

    with pytest.raises(ToolError, match=f"^no document with id {secret.pk}$"):
        read(bob, document_id=secret.pk)
    assert all(r["document_id"] != secret.pk for r in search(bob, query="zebra code")["results"])


@pytest.mark.parametrize("document_id", [0, -1, 2**63, 10**30, 999_999])
def test_an_id_that_is_no_document_is_an_error(alice: User, document_id: int) -> None:
    with pytest.raises(ToolError, match=f"no document with id {document_id}"):
        read(alice, document_id=document_id)


def test_list_names_the_users_documents_newest_first_with_how_they_begin(
    alice: User, bob: User
) -> None:
    notes = upload(alice, "notes.md", NOTES)
    recipe = upload(
        alice, "pancakes.md", "# Pancakes\n\n## Batter\n\nWhisk flour.\n\n## Frying\n\nFry."
    )
    upload(bob, "secret.md", "# Secret\n\nThe zebra code is 1234.")
    stored = Document.objects.get(pk=notes.pk).text

    body = listing(alice)

    assert body["total"] == 2
    assert [row["document_id"] for row in body["documents"]] == [recipe.pk, notes.pk]
    first, second = body["documents"]
    assert set(first) == {"document_id", "title", "total_length", "sections", "opening"}
    assert first["title"] == "Pancakes"
    assert first["sections"] == ["Batter", "Frying"]  # under the title, its own heading
    assert second["opening"] == stored[:600] and second["total_length"] == len(stored)
    assert "Oracle user guide" not in json.dumps(body)  # the guide is searched, not listed


@pytest.mark.parametrize(("asked", "given"), [(0, 1), (2, 2), (50, 20)])
def test_the_list_limit_is_kept_between_1_and_20_and_all_are_counted(
    alice: User, asked: int, given: int
) -> None:
    for n in range(22):
        upload(alice, f"z{n}.md", f"# Zebra {n}\n\nZebra number {n} grazes.")

    body = listing(alice, limit=asked)

    assert len(body["documents"]) == given and body["total"] == 22


def test_with_no_documents_the_list_is_empty(alice: User) -> None:
    assert listing(alice) == {"total": 0, "documents": []}


@pytest.mark.django_db(transaction=True)
async def test_the_engine_runs_them_in_a_thread_of_their_own(alice: User) -> None:
    """As in a run: the registry calls the sync tool in a new thread, which opens its own
    connection and gives it back (on PostgreSQL, a pool of 20 would run dry otherwise)."""
    from asgiref.sync import sync_to_async

    document = await sync_to_async(upload)(alice, "notes.md", NOTES)
    registry = ToolRegistry(document_tools(alice.pk))

    found = await registry.run("c1", "search_documents", json.dumps({"query": "zebras"}))
    missing = await registry.run("c2", "read_document", json.dumps({"document_id": 10**9}))
    wrong = await registry.run("c3", "read_document", json.dumps({"document_id": "12"}))

    assert found.ok
    assert json.loads(found.content)["results"][0]["document_id"] == document.pk
    assert not missing.ok and missing.content == "Error: no document with id 1000000000"
    assert not wrong.ok and "argument document_id must be" in wrong.content
    for n in range(25):
        again = await registry.run(f"n{n}", "search_documents", '{"query": "plains"}')
        assert again.ok
