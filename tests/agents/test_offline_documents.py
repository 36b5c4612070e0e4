"""The offline model on the user's documents: it searches once, reads around the best
passage once, and answers with short quotes and their sources, or says plainly that
it found nothing."""

from __future__ import annotations

import json

import pytest

from agents.model import Message
from agents.offline_model import HOW_TO_CONFIGURE
from agents.offline_reading import content_words, question_terms, relevance, terms_needed
from tests.agents.offline_library import ARROW, BUDGET, CORPUS, LIMITS, PANCAKES, TRIP, Library, ask

SOURCE = f"— *Oracle user guide*, Settings {ARROW} Limits"
ANSWER = (
    "To change the iteration limit, open Settings and set Max iterations to a number from 1 to 50."
)


async def test_it_quotes_the_passage_that_answers_with_its_source() -> None:
    library = Library()
    asked = await ask("How do I change the iteration limit?", library)

    assert asked.calls == ["search_documents", "read_document"]
    assert library.searches == [{"query": "change iteration limit", "limit": 5}]
    limits_start = len(CORPUS[12][1][0][1])
    assert library.reads == [{"document_id": 12, "start": limits_start - 200, "length": 1200}]
    assert asked.text.startswith("Here is what I found in *Oracle user guide*:\n\n")
    assert asked.quotes[0] == ANSWER
    assert f"> {ANSWER}\n\n{SOURCE}" in asked.text
    assert all(quote in LIMITS for quote in asked.quotes)  # quoted, never made up
    assert HOW_TO_CONFIGURE not in asked.text
    # The release notes say the user "can change" the "limits" too: a near miss.
    assert "Release notes" not in asked.text
    assert asked.result.reason is not None and asked.result.reason.value == "completed"
    assert asked.result.state.total.iterations == 3  # search, read, answer: no loop


async def test_given_a_link_pattern_each_source_opens_the_sentence_in_its_document() -> None:
    link = "/documents/{document_id}/?start={start}&length={length}#passage"

    asked = await ask("How do I change the iteration limit?", Library(), passage_link=link)

    guide = "".join(text for _, text in CORPUS[12][1])
    start = guide.index(ANSWER)
    cited = f"/documents/12/?start={start}&length={len(ANSWER)}#passage"
    assert f"> {ANSWER}\n\n— [*Oracle user guide*, Settings {ARROW} Limits]({cited})" in asked.text
    assert asked.text.count("](/documents/12/?start=") == len(asked.quotes)


async def test_it_quotes_at_most_three_excerpts_from_the_passage_found() -> None:
    asked = await ask("What about the limit?", Library())

    # Four sentences of the Limits section name a limit; the read text around it
    # has others (the Welcome section), ranked after those the search found.
    assert asked.quotes == [
        "Limits keep every run in check.",
        ANSWER,
        "The new limit applies to runs that start after the change.",
    ]
    assert asked.text.count(SOURCE) == 3


async def test_a_long_sentence_is_cut_short_at_a_word() -> None:
    asked = await ask("What is the token budget?", Library())

    (quote,) = asked.quotes
    assert len(quote) <= 300 and quote.endswith("…")
    assert BUDGET.startswith(quote.removesuffix("…"))
    assert "— *Release notes*, Version 2.0" in asked.text


async def test_an_irrelevant_question_says_nothing_was_found() -> None:
    library = Library()
    asked = await ask("Who won the 1998 world cup?", library)

    (result,) = asked.events.of_type("tool.result")
    assert json.loads(result["content"])["results"]  # the recipe and the trip were hits
    assert asked.calls == ["search_documents"]
    assert asked.text.startswith("I found nothing about that in your documents.")
    assert asked.quotes == [] and "1998" not in asked.text and "cup" not in asked.text
    assert asked.text.count(HOW_TO_CONFIGURE) == 1


async def test_the_setup_hint_is_given_once_per_conversation() -> None:
    history: list[Message] = [
        {"role": "user", "content": "Who wrote Hamlet?"},
        {"role": "assistant", "content": f"I found nothing about that. {HOW_TO_CONFIGURE}"},
    ]
    asked = await ask("Who won the 1998 world cup?", Library(), history=history)

    assert asked.text.startswith("I found nothing about that in your documents.")
    assert HOW_TO_CONFIGURE not in asked.text
    assert "ORACLE_MODEL" not in asked.text


async def test_with_no_results_it_says_so() -> None:
    library = Library()
    asked = await ask("What is the capital of Mongolia?", library)

    (result,) = asked.events.of_type("tool.result")
    assert json.loads(result["content"])["results"] == []
    assert asked.text.startswith("I found nothing about that in your documents.")


async def test_a_search_that_fails_is_said_plainly() -> None:
    library = Library(search_error="the index is being rebuilt")
    asked = await ask("How do I change the iteration limit?", library)

    assert asked.calls == ["search_documents"]
    assert asked.text.startswith("I couldn't search your documents (the index is being rebuilt).")
    assert asked.quotes == []


async def test_a_read_that_fails_quotes_the_search_passages() -> None:
    library = Library(read_error="the document was deleted")
    asked = await ask("How do I change the iteration limit?", library)

    assert asked.calls == ["search_documents", "read_document"]
    assert asked.quotes[0] == ANSWER
    assert SOURCE in asked.text


async def test_without_a_read_tool_it_quotes_the_search_passages() -> None:
    library = Library()
    asked = await ask("How do I change the iteration limit?", library, read=False)

    assert asked.calls == ["search_documents"]
    assert f"> {ANSWER}\n\n{SOURCE}" in asked.text


async def test_it_quotes_what_it_found_when_the_tools_are_taken_away() -> None:
    asked = await ask("How do I change the iteration limit?", Library(), max_iterations=2)

    assert asked.calls == ["search_documents"]  # the second call is the wind-down
    assert f"> {ANSWER}\n\n{SOURCE}" in asked.text


async def test_it_quotes_whole_sentences_of_wrapped_text_and_lists() -> None:
    asked = await ask("What is the timeout?", Library())

    assert asked.quotes == [
        "The **timeout** is the wall time a run may take, from 10 to 600 seconds.",
        "Paused time does not count toward the timeout.",
    ]
    assert asked.text.count("— *Notes*, Time") == 2


async def test_it_quotes_the_right_document_among_several() -> None:
    asked = await ask("How long do I fry each pancake?", Library())

    assert asked.quotes[0] == "Fry each pancake for two minutes on each side."
    assert "— *Family recipes*, Pancakes" in asked.text
    assert "Oracle user guide" not in asked.text


async def test_arithmetic_is_computed_without_searching() -> None:
    library = Library()
    asked = await ask("what is 17*23", library)

    assert asked.calls == ["calculator"]
    assert library.searches == []
    assert "391" in asked.text


async def test_a_question_with_no_content_words_is_not_searched() -> None:
    library = Library()
    asked = await ask("Hello!", library)

    assert asked.calls == []
    assert "answer questions from your documents" in asked.text


def test_the_search_query_keeps_the_questions_content_words() -> None:
    assert content_words("How do I change the iteration limit?") == [
        "change",
        "iteration",
        "limit",
    ]
    assert content_words("Who won the 1998 World Cup?") == ["won", "1998", "world", "cup"]
    assert content_words("What do my documents say about limits and Limit?") == ["limits"]


@pytest.mark.parametrize(("words", "needed"), [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (9, 4)])
def test_how_many_words_a_relevant_passage_shares(words: int, needed: int) -> None:
    assert terms_needed(words) == needed


@pytest.mark.parametrize(
    ("question", "passage", "relevant"),
    [
        ("How do I change the iteration limit?", ANSWER, True),
        ("changing iteration limits", "You can change the iteration limit.", True),
        ("What happens when the run stops?", "Press Stop to end a run at once.", True),
        # near misses: one word in common is not enough
        ("How do I change the iteration limit?", "The token budget is a limit too.", False),
        ("Who won the 1998 world cup?", TRIP, False),
        ("Who won the 1998 world cup?", PANCAKES, False),
        ("How do I make pancakes without eggs?", "Eggs are sold by the dozen.", False),
        ("Who won the 1998 world cup?", "France won the 1998 World Cup at home.", True),
    ],
)
def test_a_passage_is_relevant_only_if_it_shares_enough_words(
    question: str, passage: str, relevant: bool
) -> None:
    assert (relevance(question_terms(question), passage) > 0) is relevant
