"""Which questions a message asks, and how the offline model answers several at once.

A message may ask more than one thing: "What is 17*23? And what time is it?". A
question mark followed by a space ends a question (text after the last one that asks
nothing more belongs to it: "How do I stop? I mean a run."). " and " joins two
questions only where both sides open as one ("what is the token budget and who won
the 1998 world cup"); elsewhere it joins what one question asks about ("what's 5 times
5 and 3 times 3", "between what I have and what I need"), and the message is one
question. Each question is answered under its own words, the answers in order.
"""

from __future__ import annotations

import re

from agents.offline_wording import SIGNATURE

# More than this in one message, and the rest are named for asking again: each question
# may take a search and a read, and a run's iterations are counted.
MAX_QUESTIONS = 4

_ASKS = r"(?:what(?:'s|s)?|who(?:'s)?|whom|whose|when|where|why|which|how)"
_OPENS_A_QUESTION = re.compile(
    r"(?:" + _ASKS + r"|is|are|was|were|do|does|did|can|could|will|would|should|tell me)\b",
    re.IGNORECASE,
)
_ENDS_A_QUESTION = re.compile(r"(?<=\?)\s+")
# " and " before a question word with more words after it; the left side is checked apart.
_AND_THEN_ASKS = re.compile(
    r",?\s+and\s+(?:(?:also|then)\s+)?(?=" + _ASKS + r"\s+\S)", re.IGNORECASE
)
# Words that make an " and " part of one question: "between this and that".
_ONE_QUESTION = re.compile(r"\b(?:between|both|either)\b", re.IGNORECASE)
# What a question may start with that is not part of it: "And what time is it?", "Hi! What..."
_LEADING = re.compile(
    r"^(?:(?:and|also|then|so|plus)\b|(?:hi|hello|hey)(?: there)?\s*[!,.])[\s,]*(?=\S)",
    re.IGNORECASE,
)
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#])")


def questions_in(message: str) -> list[str]:
    """The questions `message` asks, in order, none twice; the message itself (trimmed)
    when it asks one."""
    found: list[str] = []
    for sentence in _sentences(message.strip()):
        for question in _joined_by_and(sentence):
            question = _LEADING.sub("", question.strip())
            if question and question.lower() not in (seen.lower() for seen in found):
                found.append(question)
    return found or [message.strip()]


def _sentences(message: str) -> list[str]:
    """The message cut after each question mark; text after the last one stays with it
    unless it opens a question of a few words ("..? I mean a run.", "..? Tell me.")."""
    pieces = [piece for piece in _ENDS_A_QUESTION.split(message) if piece.strip()]
    last = _LEADING.sub("", pieces[-1]) if pieces else ""
    asks = last.rstrip().endswith("?") or (
        _OPENS_A_QUESTION.match(last) is not None and len(last.split()) >= 3
    )
    if len(pieces) > 1 and not asks:
        pieces[-2:] = [f"{pieces[-2]} {pieces[-1]}"]
    return pieces


def _joined_by_and(sentence: str) -> list[str]:
    """The sentence cut at each " and " that joins two questions."""
    questions: list[str] = []
    start = 0
    for match in _AND_THEN_ASKS.finditer(sentence):
        left = _LEADING.sub("", sentence[start : match.start()].strip())
        if (
            len(left.split()) >= 2
            and _OPENS_A_QUESTION.match(left)
            and not _ONE_QUESTION.search(left)
        ):
            questions.append(sentence[start : match.start()])
            start = match.end()
    return [*questions, sentence[start:]]


def together(answers: list[tuple[str, str]], left_out: int, hint: str) -> str:
    """One answer to several questions: each question in bold, its answer below it; the
    offline model's signature once, then how many questions were left for asking again,
    then `hint` (said when some answer needed it)."""
    signed = any(text.endswith(SIGNATURE) for _, text in answers)
    parts = [
        f"**{_heading(question)}**\n\n{text.removesuffix(SIGNATURE)}" for question, text in answers
    ]
    end = [SIGNATURE.strip()] if signed else []
    if left_out:
        end.append(
            f"I answered the first {len(answers)} questions: ask the other {left_out} again, "
            "in a message of their own."
        )
    if hint:
        end.append(hint.strip())
    return "\n\n".join(parts + ([" ".join(end)] if end else []))


def _heading(question: str) -> str:
    """The question as asked, capitalised and with its question mark, safe in Markdown."""
    question = question.strip().rstrip(".,;:!")
    question = question[:1].upper() + question[1:]
    if not question.endswith("?"):
        question += "?"
    return _MARKDOWN.sub(r"\\\1", question)
