"""How the offline model answers from your documents: it searches once with the
question's content words, reads around the best relevant passage once, then quotes;
the passages of documents attached to the message first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from agents.model import Message
from agents.offline_conversation import Call, Step, next_call
from agents.offline_quotes import Passage, quote
from agents.offline_terms import content_words, relevance, stem
from agents.offline_wording import beyond_me, nothing_found, search_failed

SEARCH_TOOL = "search_documents"
READ_TOOL = "read_document"
SEARCH_LIMIT = 5
# With documents attached, more passages: theirs may rank below others'.
ATTACHED_SEARCH_LIMIT = 10
# Read from a little before the best passage, enough to hold it and its neighbours.
READ_BEFORE = 200
READ_LENGTH = 1200


@dataclass(frozen=True)
class Sources:
    """Where answers come from: the pattern of a passage's address (`link`, for each
    quote's source; see `agents.citations`), and the documents attached to the message
    (`attached`, their ids), whose passages are quoted before any other's."""

    link: str | None = None
    attached: tuple[int, ...] = ()


def from_documents(
    question: str,
    steps: list[Step],
    offered: set[str],
    messages: Sequence[Message],
    hint: str,
    sources: Sources = Sources(),
) -> tuple[Call | None, str]:
    """Search once, read around the best relevant passage once, then quote (each source a
    link to the sentence quoted when there is a `link` pattern). With documents attached,
    the search looks further, and their passages are the answer when any is relevant."""
    words = content_words(question)
    search = next((step for step in steps if step.name == SEARCH_TOOL), None)
    if search is None:
        if SEARCH_TOOL in offered and words:
            limit = ATTACHED_SEARCH_LIMIT if sources.attached else SEARCH_LIMIT
            arguments = {"query": " ".join(words), "limit": limit}
            return next_call(messages, SEARCH_TOOL, arguments), ""
        return None, beyond_me(hint, quoting=SEARCH_TOOL in offered)
    hits = _search_hits(search)
    if hits is None:
        problem = (search.result or "").removeprefix("Error: ").rstrip(".")
        return None, search_failed(problem if search.failed else "", hint)
    terms = [stem(word) for word in words]
    relevant = _relevant(hits, terms)
    attached = [hit for hit in relevant if hit.document_id in sources.attached]
    relevant = attached or relevant
    if not relevant:
        return None, nothing_found(hint)
    read = next((step for step in steps if step.name == READ_TOOL), None)
    best = relevant[0]
    if read is None and READ_TOOL in offered:
        arguments = {
            "document_id": best.document_id,
            "start": max(0, best.start - READ_BEFORE),
            "length": READ_LENGTH,
        }
        return next_call(messages, READ_TOOL, arguments), ""
    around = _read_passage(read, hits) if read is not None else None
    return None, quote(terms, relevant, around, hits, hint, sources.link)


def _search_hits(step: Step) -> list[Passage] | None:
    """The passages a search found, best first; None when the search failed."""
    if step.failed:
        return None
    try:
        found = json.loads(step.result or "")
    except json.JSONDecodeError:
        return None
    results = found.get("results") if isinstance(found, dict) else None
    if not isinstance(results, list):
        return None
    hits = []
    for result in results:
        try:
            text = str(result["text"])
            start = int(result.get("start") or 0)
            hits.append(
                Passage(
                    document_id=int(result["document_id"]),
                    title=str(result.get("title") or "Untitled"),
                    location=str(result["location"]) if result.get("location") else None,
                    start=start + (1 if text.startswith("…") else 0),
                    text=text.removeprefix("…").removesuffix("…"),
                    cut_before=text.startswith("…"),
                    cut_after=text.endswith("…"),
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # a malformed result is skipped, not guessed at
    return hits


def _relevant(hits: list[Passage], terms: list[str]) -> list[Passage]:
    """The hits about the question (counting their title and location), those sharing
    most of its words first, then in the search's order."""
    scored = [
        (relevance(terms, f"{hit.title} {hit.location or ''} {hit.text}"), rank, hit)
        for rank, hit in enumerate(hits)
    ]
    return [hit for score, _, hit in sorted(scored, key=lambda s: (-s[0], s[1])) if score]


def _read_passage(step: Step, hits: list[Passage]) -> Passage | None:
    """The text read around the best hit, where it could be read."""
    if step.failed:
        return None
    try:
        read = json.loads(step.result or "")
        document_id, start, text = int(read["document_id"]), int(read["start"]), str(read["text"])
        total = int(read.get("total_length") or 0)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None
    title = next((hit.title for hit in hits if hit.document_id == document_id), None)
    return Passage(
        document_id,
        str(read.get("title") or title or "Untitled"),
        None,
        start,
        text,
        cut_before=start > 0,
        cut_after=start + len(text) < total or not total,
    )
