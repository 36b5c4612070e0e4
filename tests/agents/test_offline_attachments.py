"""Documents attached to a message: the note the model reads after the message, and the
offline model answering from the attached document (quoted, with its source) when
other documents would answer too."""

from __future__ import annotations

from agents.attachments import Attached, attachments_in, with_attachments
from tests.agents.offline_library import CORPUS, Library, ask

FIELD = "Zebras sleep standing up, in short naps, while one of the herd keeps watch."
ZOO = "In the zoo, zebras sleep lying down at night, safe in their stables."
ZEBRAS = {
    **CORPUS,
    21: ("Zebra field notes", [("Rest", FIELD + " ")]),
    22: ("Zoo handbook", [("Night", ZOO + " ")]),
}
NOTE = (
    "\n\n[The user attached: Zebra field notes (document id 21); read it with "
    "read_document or search_documents.]"
)


def test_the_note_names_each_document_with_its_id_and_the_tools_that_read_it():
    one = with_attachments("How do zebras sleep?", [Attached(21, "Zebra field notes")])
    two = with_attachments("Compare", [Attached(21, "Notes, part 1"), Attached(22, "Zoo")])

    assert one == "How do zebras sleep?" + NOTE
    assert two.endswith(
        "[The user attached: Notes, part 1 (document id 21), Zoo (document id 22); "
        "read them with read_document or search_documents.]"
    )
    assert with_attachments("Hello", []) == "Hello"


def test_the_note_reads_back_as_the_message_and_its_documents():
    listed = [Attached(21, "Notes, part 1"), Attached(22, "Zoo (2024)")]

    assert attachments_in(with_attachments("Compare\nthem", listed)) == ("Compare\nthem", listed)
    assert attachments_in("No note [The user attached: x]") == (
        "No note [The user attached: x]",
        [],
    )


async def test_the_offline_model_answers_from_the_attached_document_with_its_source():
    library = Library(corpus=dict(ZEBRAS))

    asked = await ask("How do zebras sleep?" + NOTE, library)

    # The note's words are not searched for: the question's are.
    assert library.searches == [{"query": "zebras sleep", "limit": 10}]
    assert library.reads[0]["document_id"] == 21
    assert asked.quotes == [FIELD]
    assert "— *Zebra field notes*, Rest" in asked.text
    assert "Zoo handbook" not in asked.text


async def test_without_the_attachment_other_documents_answer_too():
    asked = await ask("How do zebras sleep?", Library(corpus=dict(ZEBRAS)))

    assert "Zoo handbook" in asked.text  # the attached document was preferred above


async def test_an_attachment_that_does_not_answer_leaves_the_others_to():
    note = NOTE.replace("Zebra field notes (document id 21)", "Family recipes (document id 7)")

    asked = await ask("How do zebras sleep?" + note, Library(corpus=dict(ZEBRAS)))

    assert "Zebra field notes" in asked.text or "Zoo handbook" in asked.text
    assert "Family recipes" not in asked.text
