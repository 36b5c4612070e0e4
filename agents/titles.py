"""A conversation's title, asked of its model after the first answer.

One short call with no tools: the model reads the question and the start of the
answer and names the conversation in a few words. Anything that goes wrong (the
call fails, the answer is empty or is not a title) gives "", and the caller keeps
the title it had (the first words of the question).
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing

from agents.model import Model, ModelError, ModelRequest, TextDelta

TITLE_INSTRUCTION = (
    "Name this conversation in 3 to 6 words, in the language of the question. "
    "Answer with the title alone: no quotes, no full stop, no preamble."
)
MAX_TITLE_CHARS = 60
_EXCERPT = 1500  # of the answer: the start says what it is about
_TIMEOUT_SECONDS = 20.0
_WRAPPING = "\"'\u201c\u201d\u2018\u2019*#` "  # quotes (straight and curly), emphasis, code


async def suggest_title(model: Model, question: str, answer: str) -> str:
    """A short title for a conversation that began with `question` and `answer`."""
    request = ModelRequest(
        messages=[
            {"role": "system", "content": TITLE_INSTRUCTION},
            {"role": "user", "content": f"Question: {question}\n\nAnswer: {answer[:_EXCERPT]}"},
        ],
        tools=None,
    )
    text: list[str] = []
    try:
        async with asyncio.timeout(_TIMEOUT_SECONDS), aclosing(model.stream(request)) as parts:
            async for part in parts:
                if isinstance(part, TextDelta):
                    text.append(part.text)
    except (ModelError, TimeoutError):
        return ""
    return clean_title("".join(text))


def clean_title(text: str) -> str:
    """The model's words as a title: one line, no quotes or 'Title:' label, no full
    stop, at most MAX_TITLE_CHARS characters (cut at a word); "" when nothing is left."""
    line = next((line for line in text.strip().splitlines() if line.strip()), "")
    line = line.strip().removeprefix("Title:").removeprefix("title:").strip()
    for _ in range(2):  # "Title." and "Title". alike
        line = line.strip(_WRAPPING).rstrip(".")
    line = " ".join(line.split())
    if len(line) > MAX_TITLE_CHARS:
        line = line[:MAX_TITLE_CHARS].rsplit(" ", 1)[0].rstrip(",;:-")
    return line
