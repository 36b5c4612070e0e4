"""Documents the user attached to a message, as the model reads them: a note after the
message's text naming each document and its id, and saying which tools read it.

The app writes the note (a message's text for the model); the offline model reads it
back to know which documents the question is about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_NOTE = re.compile(
    r"\n\n\[The user attached: (?P<listed>.+); read (?:it|them) with read_document or "
    r"search_documents\.\]\Z",
    re.DOTALL,
)
_LISTED = re.compile(r"(?P<title>.*?) \(document id (?P<id>\d+)\)(?:, |\Z)", re.DOTALL)


@dataclass(frozen=True)
class Attached:
    """A document attached to a message: its id and its title."""

    document_id: int
    title: str


def with_attachments(text: str, attached: Sequence[Attached]) -> str:
    """`text` followed by the note naming the `attached` documents (none: `text` alone)."""
    if not attached:
        return text
    listed = ", ".join(
        f"{' '.join(a.title.split())} (document id {a.document_id})" for a in attached
    )
    them = "it" if len(attached) == 1 else "them"
    tools = "read_document or search_documents"
    return f"{text}\n\n[The user attached: {listed}; read {them} with {tools}.]"


def attachments_in(text: str) -> tuple[str, list[Attached]]:
    """A message's own text, and the documents its note names (none without a note)."""
    note = _NOTE.search(text)
    if note is None:
        return text, []
    listed = [
        Attached(int(found["id"]), found["title"]) for found in _LISTED.finditer(note["listed"])
    ]
    return text[: note.start()], listed
