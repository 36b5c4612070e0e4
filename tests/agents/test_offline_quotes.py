"""Which sentences the offline model quotes from the passages found, and the source it
gives for each."""

from __future__ import annotations

from agents.offline_quotes import Passage, quote
from agents.offline_terms import question_terms

GUIDE = "Guide"
LINK = "/documents/{document_id}/?start={start}&length={length}#passage"


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


def test_given_a_link_pattern_each_source_links_to_the_sentence_quoted() -> None:
    text = "Owls sleep by day. You change the iteration limit on the settings page."
    sentence = "You change the iteration limit on the settings page."
    passage = hit(text, start=40)

    answer = quote(question_terms("change the iteration limit"), [passage], None, [], "", LINK)

    start = 40 + text.index(sentence)
    link = f"/documents/1/?start={start}&length={len(sentence)}#passage"
    assert answer.endswith(f"> {sentence}\n\n— [*Guide*, Limits]({link})")


def test_a_linked_source_keeps_brackets_in_a_title_from_ending_the_link() -> None:
    passage = Passage(4, "Notes [draft]", "Plans \\ ideas", 0, "The iteration limit ends a run.")

    answer = quote(question_terms("iteration limit"), [passage], None, [], "", LINK)

    link = "/documents/4/?start=0&length=31#passage"
    assert answer.endswith(f"— [*Notes \\[draft\\]*, Plans \\\\ ideas]({link})")


def test_a_sentence_after_a_numbered_bullet_starting_with_a_digit_is_linked_from_its_start() -> (
    None
):
    text = "1. 1998 saw the iteration limit raised to fifty."
    passage = hit(text)

    answer = quote(question_terms("iteration limit"), [passage], None, [], "", LINK)

    assert f"?start=3&length={len(text) - 3}#passage" in answer


def test_when_no_sentence_is_worth_quoting_it_says_nothing_was_found() -> None:
    passage = hit("Iteration limit.")  # a heading-like fragment, too short to quote
    answer = quote(question_terms("iteration limit"), [passage], None, [], " (hint)")
    assert answer.startswith("I found nothing about that in your documents.")
    assert answer.endswith(" (hint)")
