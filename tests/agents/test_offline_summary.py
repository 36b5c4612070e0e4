"""The offline model asked to summarise the user's documents: it lists them once and
names each (the first several) with how it begins, in its own words, or says there
are none and where to add some."""

from __future__ import annotations

import re

import pytest

from agents.offline_model import HOW_TO_CONFIGURE
from tests.agents.offline_library import CORPUS, PANCAKES, TRIP, Library, ask

SUMMARY_REQUESTS = [
    "summarize my documents",
    "Summarise my docs.",
    "Can you give me a summary of my documents?",
    "What are my documents about?",
    "what's in my documents",
]


@pytest.mark.parametrize("request_", SUMMARY_REQUESTS)
async def test_it_names_each_document_with_what_it_says(request_: str) -> None:
    library = Library()
    asked = await ask(request_, library)

    assert asked.calls == ["list_documents"]
    assert library.searches == []  # a summary, not a search hit list
    assert asked.text.startswith("You have 5 documents.")
    for title, _ in CORPUS.values():
        assert f"**{title}**" in asked.text
    assert "> Whisk 1 cup of flour with 2 eggs and a cup of milk. Rest the batter" in asked.text
    assert f"> {TRIP.strip()}" in asked.text
    documents = [" ".join(text for _, text in sections) for _, sections in CORPUS.values()]
    said = " ".join(" ".join(documents).split())
    for quote in asked.quotes:  # drawn from the documents, never made up
        for sentence in re.split(r"(?<=[.!?])\s+", quote.removesuffix("…")):
            assert sentence in said
    assert "but not answer this" not in asked.text
    assert HOW_TO_CONFIGURE not in asked.text


async def test_a_document_with_several_sections_names_them() -> None:
    asked = await ask("summarise my documents", Library())

    assert "**Oracle user guide** (sections: Welcome, Limits, Stop)" in asked.text
    assert "**Family recipes**\n\n> " in asked.text  # one section: nothing to add


async def test_a_heading_at_the_start_is_not_quoted_as_what_it_says() -> None:
    asked = await ask("summarize my documents", Library())

    assert "> The **timeout** is the wall time a run may take, from 10 to 600 seconds." in (
        asked.text
    )
    assert "> ## Time" not in asked.text


async def test_only_the_first_several_are_named_and_the_rest_counted() -> None:
    corpus = {n: (f"Recipe {n}", [("Pancakes", PANCAKES)]) for n in range(1, 9)}
    asked = await ask("summarize my documents", Library(corpus=corpus))

    assert asked.text.startswith("You have 8 documents.")
    assert [f"**Recipe {n}**" in asked.text for n in range(1, 9)] == [True] * 5 + [False] * 3
    assert "and 3 more" in asked.text
    assert "Documents page" in asked.text


async def test_with_no_documents_it_says_so_and_how_to_add_some() -> None:
    asked = await ask("summarize my documents", Library(corpus={}))

    assert asked.calls == ["list_documents"]
    assert asked.text.startswith("You have no documents yet.")
    assert "Documents page" in asked.text
    assert HOW_TO_CONFIGURE not in asked.text


async def test_a_listing_that_fails_is_said_plainly() -> None:
    asked = await ask("summarize my documents", Library(list_error="the database is busy"))

    assert asked.text.startswith("I couldn't list your documents (the database is busy).")


async def test_without_a_list_of_documents_it_says_it_cannot_see_them() -> None:
    library = Library()
    asked = await ask("summarize my documents", library, listing=False)

    assert asked.calls == []
    assert "can't see your documents here" in asked.text


@pytest.mark.parametrize(
    "question",
    [
        "What do my documents say about limits?",
        "summarize what my documents say about pancakes",
        "summarize the iteration limit",
    ],
)
async def test_a_question_about_something_in_them_is_still_searched(question: str) -> None:
    asked = await ask(question, Library())

    assert asked.calls[0] == "search_documents"
