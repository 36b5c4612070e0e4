"""What the offline model understands in a question, and how it answers from a tool.

A small reader for what people type: arithmetic in digits or words, percentages,
powers and roots, units of time (`agents.offline_arithmetic`), the time in a city,
and days before or after today (`agents.offline_time`). Each form must account for
the whole question (apart from filler such as "what is", `agents.offline_forms`):
a question with more in it than the form read is not understood, and the model says
so rather than guess, because a wrong confident answer is worse than "I can't".

It also reads questions for a document search: their content words, lightly stemmed,
and how many of them a passage shares (`agents.offline_terms`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agents.offline_arithmetic import arithmetic, percent, root_or_power, time_units, typed_signs
from agents.offline_arithmetic import find_arithmetic as find_arithmetic
from agents.offline_arithmetic import numbers_in_words as numbers_in_words
from agents.offline_forms import Intent as Intent
from agents.offline_forms import Reading as Reading
from agents.offline_forms import Unknown as Unknown
from agents.offline_terms import content_words as content_words
from agents.offline_terms import question_terms as question_terms
from agents.offline_terms import relevance as relevance
from agents.offline_terms import shared_terms as shared_terms
from agents.offline_terms import stem as stem
from agents.offline_terms import stems as stems
from agents.offline_terms import terms_needed as terms_needed
from agents.offline_time import clock, day_offset, time_in
from agents.offline_time import zone_of as zone_of
from agents.offline_wording import word_result as word_result

_THOUSANDS = re.compile(r"\b\d{1,3}(?:,\d{3})+(?![\d,])")


def understand(question: str) -> Reading | None:
    """What to do about `question` (None: nothing the offline model can do)."""
    text = numbers_in_words(typed_signs(question).lower())
    text = _THOUSANDS.sub(lambda match: match.group().replace(",", ""), text)
    text = " ".join(re.sub(r"[?!]", " ", text).split()).rstrip(".")
    readers: tuple[Callable[[str], Reading | None], ...] = (
        percent,
        root_or_power,
        time_units,
        time_in,
        day_offset,
        arithmetic,
        clock,
    )
    for reader in readers:
        found = reader(text)
        if found is not None:
            return found
    return None
