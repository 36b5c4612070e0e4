"""Which sentences the offline model quotes from the passages found, and the source it
gives for each."""

from __future__ import annotations

from agents.offline_quotes import Passage, quote
from agents.offline_terms import question_terms

GUIDE = "Guide"


def hit(text: str, *, start: int = 0, location: str | None = "Limits", **cut: bool) -> Passage:
    return Passage(1, GUIDE, location, start, text, **cut)


def test_it_quotes_the_sentences_that_share_the_questions_words() -> None:
    passage = hit("Owls sleep by day. You change the iteration limit on the settings page.")
    answer = quote(question_terms("How do I change the iteration limit?"), [passage], None, [], "")
    assert answer == (
        "Here is what I found in *Guide*:\n\n"
        "> You change the iteration limit on the settings page.\n\n"
        "— *Guide*, Limits"
    )


def test_a_sentence_cut_at_the_passages_edges_is_not_quoted() -> None:
    passage = hit(
        "change the iteration limit here, they said. The iteration limit can change at any "
        "time. You change the iteration limit on",
        start=500,
        cut_before=True,
        cut_after=True,
    )
    answer = quote(question_terms("change the iteration limit"), [passage], None, [], "")
    assert "> The iteration limit can change at any time." in answer
    assert "they said" not in answer
    assert "limit on" not in answer


def test_headings_are_not_quoted() -> None:
    passage = hit("## Change the iteration limit\n\nChange the iteration limit in Settings.")
    answer = quote(question_terms("change the iteration limit"), [passage], None, [], "")
    assert "## " not in answer
    assert "> Change the iteration limit in Settings." in answer


def test_text_read_beyond_the_hit_is_quoted_with_the_title_alone() -> None:
    found = hit("The iteration limit ends a run.", start=100)
    read = hit(
        "The iteration limit ends a run. In another section the iteration limit is raised.",
        start=100,
        location=None,
    )
    answer = quote(question_terms("iteration limit"), [found], read, [found], "")
    assert "> The iteration limit ends a run.\n\n— *Guide*, Limits" in answer
    assert answer.endswith("> In another section the iteration limit is raised.\n\n— *Guide*")


def test_when_no_sentence_is_worth_quoting_it_says_nothing_was_found() -> None:
    passage = hit("Iteration limit.")  # a heading-like fragment, too short to quote
    answer = quote(question_terms("iteration limit"), [passage], None, [], " (hint)")
    assert answer.startswith("I found nothing about that in your documents.")
    assert answer.endswith(" (hint)")
