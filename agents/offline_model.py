"""The offline model: a small deterministic policy behind the model interface.

It answers when no model is configured, so Oracle works with no network. It
really uses the tools: calculator for arithmetic and current_time for the time and
the date (reading questions with `agents.offline_reading`), and for anything else
search_documents and read_document, answering with short quotes of the passages
that share enough of the question's words, and their sources. It never summarises
or invents: what it cannot answer it says so plainly, and how to configure a real
model once per conversation.

Per question it makes at most one search and one read; the response after them
is the answer.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any

from agents.model import (
    FinishPart,
    Message,
    ModelRequest,
    StreamPart,
    TextDelta,
    ToolCallPart,
    UsagePart,
)
from agents.offline_reading import (
    Intent,
    Unknown,
    content_words,
    relevance,
    shared_terms,
    stem,
    understand,
    word_result,
)

OFFLINE_MODEL_NAME = "oracle/offline"

HOW_TO_CONFIGURE = (
    "To get real answers, configure a model: set ORACLE_MODEL to a LiteLLM model string, "
    "e.g. ORACLE_MODEL=openai/gpt-4o-mini with OPENAI_API_KEY set."
)

SEARCH_TOOL = "search_documents"
READ_TOOL = "read_document"
SEARCH_LIMIT = 5
# Read from a little before the best passage, enough to hold it and its neighbours.
READ_BEFORE = 200
READ_LENGTH = 1200
MAX_EXCERPTS = 3
MAX_EXCERPT_CHARS = 300
# A sentence shorter than this is a heading or a fragment, not worth quoting.
MIN_QUOTED_WORDS = 4

_CALCULATING = (
    "I can do arithmetic (in digits or words, percentages, powers and roots, units of time) "
    "and tell the time and the date"
)
NOTHING_FOUND = "I found nothing about that in your documents."
_WHAT_I_CAN_DO_WITH_DOCUMENTS = (
    "Offline, I can only quote your documents, do arithmetic and tell the time and the date."
)

Call = tuple[str, str, str]  # id, tool name, JSON arguments


@dataclass(frozen=True)
class _Step:
    """A tool call made for the current question, with its result once it came (a
    result that never came counts as a failure)."""

    name: str
    result: str | None

    @property
    def failed(self) -> bool:
        return self.result is None or self.result.startswith("Error")


@dataclass(frozen=True)
class _Passage:
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
    passage: _Passage
    offset: int  # in the document
    score: int  # how many of the question's words it has


class OfflineModel:
    """Deterministic stand-in for a real model (named `oracle/offline`)."""

    @property
    def name(self) -> str:
        return OFFLINE_MODEL_NAME

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return sum(len(str(message.get("content") or "")) // 4 + 4 for message in messages)

    def price(self, prompt_tokens: int, completion_tokens: int) -> float:
        return 0.0

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        call, text = _decide(request)
        if call is not None:
            yield ToolCallPart(*call)
        for chunk in _chunks(text):
            await asyncio.sleep(0.01)  # stream like a real model, in a few pieces
            yield TextDelta(chunk)
        prompt = self.count_tokens(request.messages[-3:])
        yield UsagePart(prompt, len(text) // 4 + 1)
        yield FinishPart("tool_calls" if call is not None else "stop")


def _decide(request: ModelRequest) -> tuple[Call | None, str]:
    """The next step for the latest question: one tool call, or the answer."""
    messages = request.messages
    offered = {tool["function"]["name"] for tool in request.tools or ()}
    question = _last_user_text(messages)
    steps = _steps_since_question(messages)
    hint = "" if _hint_given(messages) else " " + HOW_TO_CONFIGURE
    intent = understand(question)
    if isinstance(intent, Unknown):
        return None, f"{intent.text} (Answered by the offline model.)"
    if intent is not None:
        done = [step for step in steps if step.name == intent.tool]
        if done:
            return None, _answer_from_tool(intent, done[-1])
        if intent.tool in offered:
            return _call(messages, intent.tool, intent.arguments), ""
        return None, f"I am the Oracle's offline model: {_CALCULATING}, but not answer this.{hint}"
    return _from_documents(question, steps, offered, messages, hint)


def _answer_from_tool(intent: Intent, step: _Step) -> str:
    result = step.result or ""
    if step.failed:
        return f"I can't answer that: {result.removeprefix('Error: ')}. (Offline model.)"
    return f"{word_result(intent, result)} (Answered by the offline model.)"


def _from_documents(
    question: str, steps: list[_Step], offered: set[str], messages: Sequence[Message], hint: str
) -> tuple[Call | None, str]:
    """Search once, read around the best relevant passage once, then quote."""
    words = content_words(question)
    search = next((step for step in steps if step.name == SEARCH_TOOL), None)
    if search is None:
        if SEARCH_TOOL in offered and words:
            arguments = {"query": " ".join(words), "limit": SEARCH_LIMIT}
            return _call(messages, SEARCH_TOOL, arguments), ""
        abilities = "I can quote your documents, " if SEARCH_TOOL in offered else "I can "
        return None, (
            "I am the Oracle's offline model: "
            + abilities
            + _CALCULATING.removeprefix("I can ")
            + f", but not answer this.{hint}"
        )
    hits = _search_hits(search)
    if hits is None:
        problem = (search.result or "").removeprefix("Error: ").rstrip(".")
        problem = f" ({problem})" if search.failed and problem else ""
        return None, (
            f"I couldn't search your documents{problem}. {_WHAT_I_CAN_DO_WITH_DOCUMENTS}{hint}"
        )
    terms = [stem(word) for word in words]
    relevant = _relevant(hits, terms)
    if not relevant:
        return None, f"{NOTHING_FOUND} {_WHAT_I_CAN_DO_WITH_DOCUMENTS}{hint}"
    read = next((step for step in steps if step.name == READ_TOOL), None)
    best = relevant[0]
    if read is None and READ_TOOL in offered:
        arguments = {
            "document_id": best.document_id,
            "start": max(0, best.start - READ_BEFORE),
            "length": READ_LENGTH,
        }
        return _call(messages, READ_TOOL, arguments), ""
    around = _read_passage(read, hits) if read is not None else None
    return None, _quote(terms, relevant, around, hits, hint)


def _search_hits(step: _Step) -> list[_Passage] | None:
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
                _Passage(
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


def _relevant(hits: list[_Passage], terms: list[str]) -> list[_Passage]:
    """The hits about the question (counting their title and location), those sharing
    most of its words first, then in the search's order."""
    scored = [
        (relevance(terms, f"{hit.title} {hit.location or ''} {hit.text}"), rank, hit)
        for rank, hit in enumerate(hits)
    ]
    return [hit for score, _, hit in sorted(scored, key=lambda s: (-s[0], s[1])) if score]


def _read_passage(step: _Step, hits: list[_Passage]) -> _Passage | None:
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
    return _Passage(
        document_id,
        str(read.get("title") or title or "Untitled"),
        None,
        start,
        text,
        cut_before=start > 0,
        cut_after=start + len(text) < total or not total,
    )


def _quote(
    terms: list[str],
    relevant: list[_Passage],
    around: _Passage | None,
    hits: list[_Passage],
    hint: str,
) -> str:
    """The answer: a lead sentence, then the best sentences quoted with their sources."""
    sentences: list[_Sentence] = []
    for passage in ([around] if around else []) + relevant:
        for offset, text in _sentences(passage):
            score = len(shared_terms(terms, text))
            if score == 0 or len(text.split()) < MIN_QUOTED_WORDS:
                continue
            sentence = _Sentence(text, passage, passage.start + offset, score)
            if not any(_overlap(sentence, kept) for kept in sentences):
                sentences.append(sentence)  # the text read comes first: it has whole sentences
    best = relevant[0]

    def in_best(sentence: _Sentence) -> bool:
        return sentence.passage.document_id == best.document_id and (
            best.start <= sentence.offset < best.start + len(best.text)
        )

    # The best passage's sentences count one word more; on a tie they come first, then
    # those in another passage found, then the ones read around it, each in order.
    ranked = sorted(
        sentences,
        key=lambda sentence: (
            -sentence.score - in_best(sentence),
            not in_best(sentence),
            _location(sentence, hits) is None,
        ),
    )
    if not ranked:
        return f"{NOTHING_FOUND} {_WHAT_I_CAN_DO_WITH_DOCUMENTS}{hint}"
    # In the best passage, a sentence with half the words of the best sentence is worth
    # quoting; elsewhere only one as good as the best.
    top = max(sentence.score for sentence in sentences)
    nearby = max(1, math.ceil(top / 2))
    chosen = [
        sentence for sentence in ranked if sentence.score >= (nearby if in_best(sentence) else top)
    ][:MAX_EXCERPTS]
    titles = {sentence.passage.title for sentence in chosen}
    where = f"*{next(iter(titles))}*" if len(titles) == 1 else "your documents"
    parts = [f"Here is what I found in {where}:"]
    for sentence in chosen:
        parts.append("> " + _shortened(" ".join(sentence.text.split())))
        parts.append(f"— {_source(sentence, hits)}")
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


def _sentences(passage: _Passage) -> list[tuple[int, str]]:
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
            if text:
                offset = block.start() + sentence.start() + sentence.group().index(text[0])
                found.append((offset, text))
    if found and passage.cut_before and not re.match(r"[\W\dA-Z]", found[0][1]):
        found.pop(0)
    if found and passage.cut_after and not _ENDS_A_SENTENCE.search(found[-1][1]):
        found.pop()
    return found


def _looks_like_a_heading(line: str) -> bool:
    return len(line.split()) <= 8 and not _ENDS_A_SENTENCE.search(line)


def _shortened(text: str) -> str:
    if len(text) <= MAX_EXCERPT_CHARS:
        return text
    return text[: MAX_EXCERPT_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _source(sentence: _Sentence, hits: list[_Passage]) -> str:
    """'*Title*, Location', or the title alone when the location is not known."""
    location = _location(sentence, hits)
    return f"*{sentence.passage.title}*" + (f", {location}" if location else "")


def _location(sentence: _Sentence, hits: list[_Passage]) -> str | None:
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


def _call(messages: Sequence[Message], name: str, arguments: dict[str, Any]) -> Call:
    made = sum(len(message.get("tool_calls") or ()) for message in messages)
    return f"offline_call_{made + 1}", name, json.dumps(arguments)


def _steps_since_question(messages: Sequence[Message]) -> list[_Step]:
    """The tool calls made (and answered) since the latest user message."""
    results: dict[str, str] = {}
    calls: list[tuple[str, str]] = []
    for message in messages[_last_user_index(messages) + 1 :]:
        if message["role"] == "tool":
            results[str(message.get("tool_call_id"))] = str(message.get("content") or "")
        for wire in message.get("tool_calls") or ():
            calls.append((wire["id"], wire["function"]["name"]))
    return [_Step(name, results.get(call_id)) for call_id, name in calls]


def _hint_given(messages: Sequence[Message]) -> bool:
    """Whether an earlier answer in the conversation already said how to configure a model."""
    return any(
        message["role"] == "assistant" and HOW_TO_CONFIGURE in str(message.get("content") or "")
        for message in messages
    )


def _last_user_index(messages: Sequence[Message]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "user":
            return index
    return -1


def _last_user_text(messages: Sequence[Message]) -> str:
    index = _last_user_index(messages)
    return str(messages[index].get("content") or "") if index >= 0 else ""


def _chunks(text: str, pieces: int = 4) -> list[str]:
    if not text:
        return []
    words = text.split(" ")
    size = max(1, -(-len(words) // pieces))
    parts = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [part + (" " if n < len(parts) - 1 else "") for n, part in enumerate(parts)]
