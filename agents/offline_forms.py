"""How the offline model matches a form of question, and what a match asks for.

A form (a percentage, a square root, the time in a city, ...) must account for the
whole question apart from filler such as "what is": a question with more in it
than the form read is not understood. A match is an `Intent` (a tool call and how
to word its result) or an `Unknown` (what to say instead of guessing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NUMBER = r"(\d+(?:\.\d+)?)"
SIGNED = r"(-?\d+(?:\.\d+)?)"


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# What may surround a form in a question without changing it ("what is ... please?").
FILLER = word_set(
    """a an the what whats which is are was it s please calculate compute evaluate work out
    solve tell me can could would you how much equal equals do does make makes give get for
    hey hi hello oracle quickly exactly just now ok okay so result answer value of i need
    want to know let us ="""
)


@dataclass(frozen=True)
class Intent:
    """A tool call that answers the question, and how to word its result."""

    tool: str
    arguments: dict[str, object]
    answer: str  # with {result}; for dates, {date} and {weekday} too


@dataclass(frozen=True)
class Unknown:
    """Something the offline model must not guess: what it says instead."""

    text: str


Reading = Intent | Unknown


def only_filler(text: str, match: re.Match[str], filler: frozenset[str] = FILLER) -> bool:
    """Whether everything in `text` outside `match` is filler (no number, no other word)."""
    rest = text[: match.start()] + " " + text[match.end() :]
    return all_filler(rest, filler)


def all_filler(rest: str, filler: frozenset[str] = FILLER) -> bool:
    tokens = re.findall(r"[a-z]+|\d+|[^\s\w.,;:'\"]", rest)
    return all(token in filler for token in tokens)


def whole(pattern: str, text: str, filler: frozenset[str] = FILLER) -> re.Match[str] | None:
    """The first match of `pattern` that leaves only filler around it."""
    for match in re.finditer(pattern, text):
        if only_filler(text, match, filler):
            return match
    return None
