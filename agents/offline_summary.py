"""How the offline model summarises your documents: it lists them once (list_documents),
then names each of the first few with its sections and how it begins, quoted.

It asks for the summary of all your documents ("summarize my documents", "what are my
documents about?"); a question about something in them ("what do my documents say
about limits?") is a search (`agents.offline_documents`). It quotes, never invents: a
document's first sentences say what it is about better than any guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.model import Message
from agents.offline_conversation import Call, Step, next_call
from agents.offline_forms import FILLER, whole
from agents.offline_quotes import MIN_QUOTED_WORDS, Passage, sentences, shortened

LIST_TOOL = "list_documents"
SUMMARISED = 5  # documents named; the rest are counted
SENTENCES_QUOTED = 2  # of each document's start
SECTIONS_NAMED = 6
NO_DOCUMENTS = (
    "You have no documents yet. To add some, open the Documents page (in the menu under "
    "your name) and drop Markdown, text, HTML or PDF files on it: then I can answer from "
    "them and summarise them."
)
CANNOT_SEE_THEM = "I can't see your documents here, so I can't summarise them."

_DOCUMENTS = r"(?:my|the|our) (?:own |uploaded )?(?:documents|docs|files|uploads)"
_ASKS_FOR_A_SUMMARY = (
    r"(?:summari[sz]e|sum up|recap|outline|an? (?:summary|overview|recap) of|"
    r"(?:summary|overview|recap) of) (?:all )?(?:of )?" + _DOCUMENTS,
    r"what (?:are|is|s) (?:in )?(?:all )?" + _DOCUMENTS + r"(?: about)?",
    r"what do (?:my|our) (?:documents|docs|files) (?:say|contain|cover|hold)",
    r"what (?:documents|docs|files) do (?:i|we) have",
    r"(?:list|show) (?:me )?(?:all )?" + _DOCUMENTS,
)
_AROUND_A_SUMMARY = FILLER | {"briefly", "short", "brief", "quick", "all"}
# A location's last heading names its section; a PDF's pages name none.
_SEPARATOR = re.compile(r"\s*\N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK}\s*")
_PAGE = re.compile(r"page \d+", re.IGNORECASE)


@dataclass(frozen=True)
class _Listed:
    title: str
    sections: list[str]
    opening: str
    cut: bool  # the opening is not the whole text


def asks_for_summary(question: str) -> bool:
    """Whether `question` asks what all your documents say (and nothing more)."""
    text = " ".join(re.sub(r"[?!.,']", " ", question.lower()).split())
    return any(whole(form, text, _AROUND_A_SUMMARY) for form in _ASKS_FOR_A_SUMMARY)


def summarise(
    steps: list[Step], offered: set[str], messages: Sequence[Message]
) -> tuple[Call | None, str]:
    """List the documents once, then say what each of the first few is about."""
    listing = next((step for step in steps if step.name == LIST_TOOL), None)
    if listing is None:
        if LIST_TOOL in offered:
            return next_call(messages, LIST_TOOL, {"limit": SUMMARISED}), ""
        return None, CANNOT_SEE_THEM
    listed = _listed(listing)
    if listed is None:
        problem = (listing.result or "").removeprefix("Error: ").rstrip(".")
        problem = f" ({problem})" if listing.failed and problem else ""
        return None, f"I couldn't list your documents{problem}."
    total, documents = listed
    if not documents:
        return None, NO_DOCUMENTS
    each = "Here is how each begins:" if total > 1 else "Here is how it begins:"
    parts = [f"You have {total} document{'s' * (total != 1)}. {each}"]
    for document in documents[:SUMMARISED]:
        sections = _sections(document)
        parts.append(f"**{document.title}**" + (f" (sections: {sections})" if sections else ""))
        parts.append("> " + _beginning(document))
    if total > SUMMARISED:
        parts.append(f"…and {total - SUMMARISED} more: see them all on the Documents page.")
    return None, "\n\n".join(parts)


def _listed(step: Step) -> tuple[int, list[_Listed]] | None:
    """How many documents there are and those listed; None when the listing failed."""
    if step.failed:
        return None
    try:
        found = json.loads(step.result or "")
        rows = found["documents"]
        total = max(int(found.get("total") or 0), len(rows))
        documents = [
            _Listed(
                title=str(row.get("title") or "Untitled"),
                sections=[str(location) for location in row.get("sections") or ()],
                opening=str(row.get("opening") or ""),
                cut=len(str(row.get("opening") or "")) < int(row.get("total_length") or 0),
            )
            for row in rows
        ]
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None
    return total, documents


def _sections(document: _Listed) -> str:
    """The names of a document's sections, when it has more than one."""
    names: list[str] = []
    for location in document.sections:
        name = _SEPARATOR.split(location.strip())[-1]
        if name and name not in names and name != document.title and not _PAGE.fullmatch(name):
            names.append(name)
    if len(names) < 2:
        return ""
    return ", ".join(names[:SECTIONS_NAMED]) + (", …" if len(names) > SECTIONS_NAMED else "")


def _beginning(document: _Listed) -> str:
    """The first sentences of the document (a line or two), or its first words."""
    passage = Passage(0, document.title, None, 0, document.opening, cut_after=document.cut)
    chosen: list[str] = []
    for _, sentence in sentences(passage):
        sentence = " ".join(sentence.split())
        if len(sentence.split()) >= MIN_QUOTED_WORDS and sentence not in chosen:
            chosen.append(sentence)
        if len(chosen) == SENTENCES_QUOTED:
            break
    if chosen:
        return shortened(" ".join(chosen))
    words = " ".join(re.sub(r"(?m)^\s*#+\s*", "", document.opening).split())
    return shortened(words) if words else "(It has no text.)"
