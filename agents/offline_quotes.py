"""Which sentences of the passages found the offline model quotes, and with which source.

It quotes whole sentences that share the question's words, the best passage's
first, at most a few and none twice, each shortened to a line or two and followed
by its source: the document's title and, where the search said, its section; given
the app's pattern for a passage's address, a link to the sentence quoted
(`agents.citations`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from agents.citations import citation
from agents.offline_terms import shared_terms
from agents.offline_wording import nothing_found

MAX_EXCERPTS = 3
MAX_EXCERPT_CHARS = 300
# A sentence shorter than this is a heading or a fragment, not worth quoting.
MIN_QUOTED_WORDS = 4


@dataclass(frozen=True)
class Passage:
    """A stretch of a document: a search hit, or the text read around one."""

    document_id: int
    title: str
    location: str | None
    start: int
    text: str
    cut_before: bool = False  # it may begin in the middle of a sentence
    cut_after: bool = False  # or end in one


@dataclass(frozen=True)
class _Sentence:
    text: str
    passage: Passage
    offset: int  # in the document
    score: int  # how many of the question's words it has


def quote(
    terms: list[str],
    relevant: list[Passage],
    around: Passage | None,
    hits: list[Passage],
    hint: str,
    passage_link: str | None = None,
) -> str:
    """The answer: a lead sentence, then the best sentences quoted with their sources,
    each a link made with `passage_link` (see `agents.citations`) when there is one."""
    kept: list[_Sentence] = []
    for passage in ([around] if around else []) + relevant:
        for offset, text in sentences(passage):
            score = len(shared_terms(terms, text))
            if score == 0 or len(text.split()) < MIN_QUOTED_WORDS:
                continue
            sentence = _Sentence(text, passage, passage.start + offset, score)
            if not any(_overlap(sentence, earlier) for earlier in kept):
                kept.append(sentence)  # the text read comes first: it has whole sentences
    best = relevant[0]

    def in_best(sentence: _Sentence) -> bool:
        return sentence.passage.document_id == best.document_id and (
            best.start <= sentence.offset < best.start + len(best.text)
        )

    # The best passage's sentences count one word more; on a tie they come first, then
    # those in another passage found, then the ones read around it, each in order.
    ranked = sorted(
        kept,
        key=lambda sentence: (
            -sentence.score - in_best(sentence),
            not in_best(sentence),
            _location(sentence, hits) is None,
        ),
    )
    if not ranked:
        return nothing_found(hint)
    # In the best passage, a sentence with half the words of the best sentence is worth
    # quoting; elsewhere only one as good as the best.
    top = max(sentence.score for sentence in kept)
    nearby = max(1, math.ceil(top / 2))
    chosen = [
        sentence for sentence in ranked if sentence.score >= (nearby if in_best(sentence) else top)
    ][:MAX_EXCERPTS]
    titles = {sentence.passage.title for sentence in chosen}
    where = f"*{next(iter(titles))}*" if len(titles) == 1 else "your documents"
    parts = [f"Here is what I found in {where}:"]
    for sentence in chosen:
        parts.append("> " + shortened(" ".join(sentence.text.split())))
        parts.append(f"— {_source(sentence, hits, passage_link)}")
    return "\n\n".join(parts)


def _overlap(one: _Sentence, other: _Sentence) -> bool:
    """Whether two sentences are (partly) the same text of one document."""
    if " ".join(one.text.split()) == " ".join(other.text.split()):
        return True
    return one.passage.document_id == other.passage.document_id and (
        one.offset < other.offset + len(other.text) and other.offset < one.offset + len(one.text)
    )


# A paragraph, or one item of a list.
_BLOCK = re.compile(r"(?:[^\n]|\n(?![ \t]*\n|[ \t]*(?:[-*+]|\d+[.)])[ \t]))+")
_SENTENCE = re.compile(r"(?:[^.!?]|[.!?](?![\"')\]]*(?:\s|$)))+(?:[.!?]+[\"')\]]*)?")
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])[ \t]+")
_ENDS_A_SENTENCE = re.compile(r"[.!?:;][\"')\]*_]*$")


def sentences(passage: Passage) -> list[tuple[int, str]]:
    """The whole sentences of a passage, with their offsets in it. Lines wrapped inside a
    paragraph are joined; a paragraph or list item ends a sentence; headings and the
    pieces of sentences at a cut edge are left out."""
    found = []
    for block in _BLOCK.finditer(passage.text):
        lines = block.group().strip()
        if lines.startswith("#") or ("\n" not in lines and _looks_like_a_heading(lines)):
            continue
        for sentence in _SENTENCE.finditer(block.group()):
            text = _BULLET.sub("", sentence.group().strip())
            if text:  # it ends where the sentence does, spaces aside
                end = sentence.start() + len(sentence.group().rstrip())
                offset = block.start() + end - len(text)
                found.append((offset, text))
    if found and passage.cut_before and not re.match(r"[\W\dA-Z]", found[0][1]):
        found.pop(0)
    if found and passage.cut_after and not _ENDS_A_SENTENCE.search(found[-1][1]):
        found.pop()
    return found


def _looks_like_a_heading(line: str) -> bool:
    return len(line.split()) <= 8 and not _ENDS_A_SENTENCE.search(line)


def shortened(text: str) -> str:
    """`text`, cut at a word to a line or two (MAX_EXCERPT_CHARS) with "…" where cut."""
    if len(text) <= MAX_EXCERPT_CHARS:
        return text
    return text[: MAX_EXCERPT_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _source(sentence: _Sentence, hits: list[Passage], link: str | None) -> str:
    """'*Title*, Location', or the title alone when the location is not known; a link to
    the sentence in its document when there is a `link` pattern."""
    return citation(
        title=sentence.passage.title,
        location=_location(sentence, hits),
        document_id=sentence.passage.document_id,
        start=sentence.offset,
        length=len(sentence.text),
        link=link,
    )


def _location(sentence: _Sentence, hits: list[Passage]) -> str | None:
    """The location of the search hit the sentence lies in. Text read around a hit may
    reach into another section, whose name is not known: None then."""
    passage = sentence.passage
    if passage.location is not None:
        return passage.location
    return next(
        (
            hit.location
            for hit in hits
            if hit.document_id == passage.document_id
            and hit.start <= sentence.offset < hit.start + len(hit.text)
        ),
        None,
    )
