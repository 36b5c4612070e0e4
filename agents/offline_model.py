"""The offline model: a small deterministic policy behind the model interface.

It answers when no model is configured, so Oracle works with no network. It
really uses the tools: calculator for arithmetic and current_time for the time and
the date (reading questions with `agents.offline_reading`), list_documents to say
what your documents are about (`agents.offline_summary`), and for anything else
search_documents and read_document (`agents.offline_documents`), answering with
short quotes of the passages that share enough of the question's words, and their
sources (`agents.offline_quotes`). It quotes, never invents: what it cannot answer
it says so plainly, and how to configure a real model once per conversation
(`agents.offline_wording`). A greeting it answers like a host, saying what it can
do here (`agents.offline_greetings`).

A message may ask several questions (`agents.offline_questions`): each is answered
in turn. Per question it makes at most one search and one read; the response after
them is the answer. Documents attached to the message (`agents.attachments`) are where
it looks first. This module decides which, from the conversation
(`agents.offline_conversation`), and streams it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence

from agents.attachments import attachments_in
from agents.citations import document_citation
from agents.model import (
    FinishPart,
    Message,
    ModelRequest,
    StreamPart,
    TextDelta,
    ToolCallPart,
    UsagePart,
    content_text,
)
from agents.offline_conversation import Call as Call
from agents.offline_conversation import (
    Step,
    last_user_text,
    next_call,
    said_before,
    steps_since_question,
)
from agents.offline_documents import READ_BEFORE as READ_BEFORE
from agents.offline_documents import READ_LENGTH as READ_LENGTH
from agents.offline_documents import READ_TOOL as READ_TOOL
from agents.offline_documents import SEARCH_LIMIT as SEARCH_LIMIT
from agents.offline_documents import SEARCH_TOOL as SEARCH_TOOL
from agents.offline_documents import Sources, from_documents
from agents.offline_greetings import YOU_ARE_WELCOME, greeting, is_greeting, is_thanks
from agents.offline_questions import MAX_QUESTIONS, questions_in, together
from agents.offline_quotes import MAX_EXCERPT_CHARS as MAX_EXCERPT_CHARS
from agents.offline_quotes import MAX_EXCERPTS as MAX_EXCERPTS
from agents.offline_quotes import MIN_QUOTED_WORDS as MIN_QUOTED_WORDS
from agents.offline_reading import Intent, Unknown, understand
from agents.offline_summary import LIST_TOOL as LIST_TOOL
from agents.offline_summary import asks_for_summary, summarise
from agents.offline_wording import HOW_TO_CONFIGURE as HOW_TO_CONFIGURE
from agents.offline_wording import NOTHING_FOUND as NOTHING_FOUND
from agents.offline_wording import answered, beyond_me, cannot_see, tool_failed, word_result

OFFLINE_MODEL_NAME = "oracle/offline"


class OfflineModel:
    """Deterministic stand-in for a real model (named `oracle/offline`). Given the app's
    pattern for a passage's address (`passage_link`, see `agents.citations`), each quote's
    source is a link to the sentence in its document; given a document's
    (`document_link`), an attached image it cannot see is a link to its document."""

    def __init__(
        self, *, passage_link: str | None = None, document_link: str | None = None
    ) -> None:
        self._passage_link = passage_link
        self._document_link = document_link

    @property
    def name(self) -> str:
        return OFFLINE_MODEL_NAME

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return sum(len(content_text(message.get("content"))) // 4 + 4 for message in messages)

    def price(self, prompt_tokens: int, completion_tokens: int) -> float:
        return 0.0

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        call, text = _decide(request, self._passage_link, self._document_link)
        if call is not None:
            yield ToolCallPart(*call)
        for chunk in _chunks(text):
            await asyncio.sleep(0.01)  # stream like a real model, in a few pieces
            yield TextDelta(chunk)
        prompt = self.count_tokens(request.messages[-3:])
        yield UsagePart(prompt, len(text) // 4 + 1)
        yield FinishPart("tool_calls" if call is not None else "stop")


def _decide(
    request: ModelRequest, link: str | None, document_link: str | None = None
) -> tuple[Call | None, str]:
    """The next step for the latest message: one tool call, or the answer. Images
    attached it cannot see: it says so first, naming each, and answers from the other
    documents attached (with none, that is the whole answer)."""
    messages = request.messages
    offered = {tool["function"]["name"] for tool in request.tools or ()}
    steps = steps_since_question(messages)
    hint = "" if said_before(messages, HOW_TO_CONFIGURE) else " " + HOW_TO_CONFIGURE
    text, attached = attachments_in(last_user_text(messages))
    images = [
        document_citation(title=a.title, document_id=a.document_id, link=document_link)
        for a in attached
        if a.image
    ]
    documents = tuple(a.document_id for a in attached if not a.image)
    if images and not documents:
        return None, cannot_see(images, hint)
    sources = Sources(link, documents)
    questions = questions_in(text)
    if len(questions) == 1:
        call, answer = _decide_one(questions[0], steps, offered, messages, hint, sources)
    else:
        call, answer = _decide_each(questions, steps, offered, messages, hint, sources)
    if images and call is None:
        answer = f"{cannot_see(images, '')}\n\n{answer}"
    return call, answer


def _decide_each(
    questions: list[str],
    steps: list[Step],
    offered: set[str],
    messages: Sequence[Message],
    hint: str,
    sources: Sources,
) -> tuple[Call | None, str]:
    """Each question in turn: the steps made so far are handed out in order, each to the
    question that asked for it, until one needs a call not made yet; then the answers.
    A call an earlier question made already is not made again (the same call twice is no
    progress), and a tool no longer offered (the wind-down) counts for the step made."""
    remaining = list(steps)
    made: list[Step] = []
    answers: list[tuple[str, str]] = []
    needs_hint = False
    for question in questions[:MAX_QUESTIONS]:
        own: list[Step] = []
        while True:
            can = (offered | {remaining[0].name}) if remaining else offered
            call, text = _decide_one(question, own, can, messages, "", sources)
            if call is None:
                break
            if (earlier := next((step for step in made if step.answers(call)), None)) is not None:
                own.append(earlier)
            elif remaining:
                own.append(remaining.pop(0))
                made.append(own[-1])
            else:
                return call, ""
        answers.append((question, text))
        needs_hint = (
            needs_hint or _decide_one(question, own, can, messages, hint, sources)[1] != text
        )
    left_out = max(0, len(questions) - MAX_QUESTIONS)
    return None, together(answers, left_out, hint if needs_hint else "")


def _decide_one(
    question: str,
    steps: list[Step],
    offered: set[str],
    messages: Sequence[Message],
    hint: str,
    sources: Sources,
) -> tuple[Call | None, str]:
    """The next step for one question, given the steps made for it (`sources`: the
    pattern of a passage's address for the sources of quotes, and the documents attached)."""
    if is_greeting(question):
        return None, greeting(question, offered)
    if is_thanks(question):
        return None, YOU_ARE_WELCOME
    if asks_for_summary(question):
        return summarise(steps, offered, messages)
    intent = understand(question)
    if isinstance(intent, Unknown):
        return None, answered(intent.text)
    if intent is not None:
        done = [step for step in steps if step.name == intent.tool]
        if done:
            return None, _answer_from_tool(intent, done[-1])
        if intent.tool in offered:
            return next_call(messages, intent.tool, intent.arguments), ""
        return None, beyond_me(hint)
    return from_documents(question, steps, offered, messages, hint, sources)


def _answer_from_tool(intent: Intent, step: Step) -> str:
    result = step.result or ""
    if step.failed:
        return tool_failed(result)
    return answered(word_result(intent, result))


def _chunks(text: str, pieces: int = 4) -> list[str]:
    if not text:
        return []
    words = text.split(" ")
    size = max(1, -(-len(words) // pieces))
    parts = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [part + (" " if n < len(parts) - 1 else "") for n, part in enumerate(parts)]
