"""Which words a question is about, and how many of them a passage shares.

The offline model searches your documents with a question's content words (those
left when the stop words are taken out), lightly stemmed so that forms of a word
meet, and counts a passage as relevant when it shares enough of them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from agents.offline_forms import word_set

_STOP_WORDS = word_set(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during
    each either else ever every few for from further get gets getting give go goes going
    got had has have having he her here hers herself him himself his how i if in into is
    it its itself just know let like may me might mine more most much must my myself need
    no nor not now of off on once one only or other our ours ourselves out over own please
    quite rather really same say says said see shall she should show so some such tell
    than that the their theirs them themselves then there these they thing things this
    those through thus to too under until up upon us use very want was way we were what
    whats when whenever where whether which while who whom whose why will with within
    without would yes yet you your yours yourself yourselves explain describe find
    document documents doc docs file files oracle hey hi hello thanks thank"""
)


def content_words(question: str) -> list[str]:
    """The words of `question` that say what it is about, in order, without repeats:
    'How do I change the iteration limit?' -> ['change', 'iteration', 'limit']."""
    words: list[str] = []
    seen: set[str] = set()
    for word in re.findall(r"[a-z0-9]+(?:'[a-z]+)?", question.lower()):
        word = word.removesuffix("'s").replace("'", "")
        if word in _STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        if (key := stem(word)) not in seen:
            seen.add(key)
            words.append(word)
    return words


def stem(word: str) -> str:
    """A light stem, so that forms of a word meet: limits, limit -> limit; changes,
    changed, changing, change -> chang; stopped, stops -> stop."""
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes", "zes")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # stopped -> stop, running -> run
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def stems(text: str) -> set[str]:
    """The stems of every word in `text`."""
    return {stem(word) for word in re.findall(r"[a-z0-9]+", text.lower().replace("'s", ""))}


def question_terms(question: str) -> list[str]:
    """The stems of the question's content words."""
    return [stem(word) for word in content_words(question)]


def shared_terms(terms: Iterable[str], text: str) -> set[str]:
    """Which of the question's stems `text` has."""
    return set(terms) & stems(text)


def relevance(terms: Sequence[str], text: str) -> int:
    """How many of the question's stems `text` shares, or 0 when that is too few for the
    text to count as being about the question (`terms_needed`)."""
    shared = len(shared_terms(terms, text))
    return shared if terms and shared >= terms_needed(len(terms)) else 0


def terms_needed(count: int) -> int:
    """How many of a question's `count` content words a passage must share to count as
    relevant: all of one or two, then three in five (rounded up), never more than four.
    One shared word of four ('world' of 'who won the 1998 world cup') is a near miss."""
    return min(count, 4, max(1, math.ceil(count * 0.6)))
