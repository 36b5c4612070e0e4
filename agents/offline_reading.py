"""What the offline model understands in a question, and how it answers from a tool.

A small reader for what people type: arithmetic in digits or words, percentages,
powers and roots, units of time, the time in a city, and days before or after today.
Each form must account for the whole question (apart from filler such as "what is"):
a question with more in it than the form read is not understood, and the model says
so rather than guess, because a wrong confident answer is worse than "I can't".

It also reads questions for a document search: their content words, lightly stemmed,
and how many of them a passage shares.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from zoneinfo import available_timezones

_NUMBER = r"(\d+(?:\.\d+)?)"
_SIGNED = r"(-?\d+(?:\.\d+)?)"
_PERCENT = r"\s*(?:%|percent)"
_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86_400, "week": 604_800}
_UNIT = r"(seconds?|minutes?|hours?|days?|weeks?)"
_SMALL = {word: n for n, word in enumerate(
    ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
     "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
     "eighteen", "nineteen")
)}  # fmt: skip
_TENS = {word: 10 * n for n, word in enumerate(
    ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"), 2
)}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}
_NUMBER_WORD = re.compile(
    r"\b(?:(?:" + "|".join([*_SMALL, *_TENS, *_SCALES]) + r")(?:[\s-]+(?:and[\s-]+)?)?)+\b",
    re.IGNORECASE,
)
_THOUSANDS = re.compile(r"\b\d{1,3}(?:,\d{3})+(?![\d,])")
# Words into arithmetic, longest first; a number after a word is group 1.
_WORDS_INTO_SYMBOLS = (
    (r"\bsquare root of " + _NUMBER, r"\1 ** 0.5"),
    (r"\bsqrt\s*\(\s*" + _NUMBER + r"\s*\)", r"\1 ** 0.5"),
    (r"\bsqrt " + _NUMBER, r"\1 ** 0.5"),
    (r"\bcube root of " + _NUMBER, r"\1 ** (1/3)"),
    # A number's own minus is squared with it: "-8 squared" is 64.
    (r"(?<![\d)])(?<![\d)] )-" + _NUMBER + r" squared\b", r"(-\1) ** 2"),
    (r"(?<![\d)])(?<![\d)] )-" + _NUMBER + r" cubed\b", r"(-\1) ** 3"),
    (_NUMBER + r" squared\b", r"\1 ** 2"),
    (_NUMBER + r" cubed\b", r"\1 ** 3"),
    (r"\b(?:an? |one )?half of " + _NUMBER, r"\1 / 2"),
    (r"\b(?:an? |one )?third of " + _NUMBER, r"\1 / 3"),
    (r"\b(?:an? |one )?quarter of " + _NUMBER, r"\1 / 4"),
    (r"\b(?:twice|double) " + _NUMBER, r"2 * \1"),
    (r"\btriple " + _NUMBER, r"3 * \1"),
    (r"\b(?:raised )?to the power of\b", "**"),
    (r"\braised to\b", "**"),
    (r"\bmultiplied by\b", "*"),
    (r"\bdivided by\b", "/"),
    (r"\btimes\b", "*"),
    (r"\bover\b", "/"),
    (r"\bplus\b", "+"),
    (r"\bminus\b", "-"),
    (r"\b(?:mod|modulo)\b", "%"),
)


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_ARITHMETIC = re.compile(r"[-+(]*\d[\d.\s()+\-*/%^x]*")
_IS_ARITHMETIC = re.compile(r"\d\s*\)?\s*(\*\*|[-+*/%^])\s*[-(\s]*\d")

# What may surround a form in a question without changing it ("what is ... please?").
_FILLER = _word_set(
    """a an the what whats which is are was it s please calculate compute evaluate work out
    solve tell me can could would you how much equal equals do does make makes give get for
    hey hi hello oracle quickly exactly just now ok okay so result answer value of i need
    want to know let us ="""
)
# Around a day before or after today: "what day of the week will it be ...".
_DATE_FILLER = _FILLER | {"day", "date", "week", "will", "be", "going"}
_CLOCK = re.compile(
    r"\b(?:(?:(?:what|which)(?:'s|s| is)? )?(?:the )?(?:current |today's |todays |local )?"
    r"(?:time|date|day(?: of the week)?|year|month)"
    r"(?: (?:is it|it is|is today|today|now|right now|is))*"
    r"|what(?:'s|s| is) today)\b"
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


def understand(question: str) -> Reading | None:
    """What to do about `question` (None: nothing the offline model can do)."""
    text = numbers_in_words(question.lower())
    text = _THOUSANDS.sub(lambda match: match.group().replace(",", ""), text)
    text = " ".join(re.sub(r"[?!]", " ", text).split()).rstrip(".")
    readers: tuple[Callable[[str], Reading | None], ...] = (
        _percent,
        _root_or_power,
        _time_units,
        _time_in,
        _day_offset,
        _arithmetic,
        _clock,
    )
    for reader in readers:
        found = reader(text)
        if found is not None:
            return found
    return None


def numbers_in_words(text: str) -> str:
    """'one hundred and five plus three' -> '105 plus three' -> ... every number word
    sequence becomes its digits."""
    return _NUMBER_WORD.sub(lambda match: _spaced(match.group()), text)


def _spaced(words: str) -> str:
    value = _words_value(words)
    trailing = " " if words[-1:].isspace() else ""
    return (str(value) if value is not None else words) + trailing


def _words_value(words: str) -> int | None:
    total, current = 0, 0
    for word in re.split(r"[\s-]+", words.lower().strip()):
        if word in ("", "and"):
            continue
        if word in _SMALL:
            current += _SMALL[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        else:
            return None
    return total + current


def _only_filler(text: str, match: re.Match[str], filler: frozenset[str] = _FILLER) -> bool:
    """Whether everything in `text` outside `match` is filler (no number, no other word)."""
    rest = text[: match.start()] + " " + text[match.end() :]
    return _all_filler(rest, filler)


def _all_filler(rest: str, filler: frozenset[str] = _FILLER) -> bool:
    tokens = re.findall(r"[a-z]+|\d+|[^\s\w.,;:'\"]", rest)
    return all(token in filler for token in tokens)


def _whole(pattern: str, text: str) -> re.Match[str] | None:
    """The first match of `pattern` that leaves only filler around it."""
    for match in re.finditer(pattern, text):
        if _only_filler(text, match):
            return match
    return None


_NOT_A_FACTOR = r"(?!\s*(?:%|percent|\d|\.\d|\*|/|\^))"


def _percent(text: str) -> Intent | None:
    forms: tuple[tuple[str, Callable[[re.Match[str]], Intent]], ...] = (
        (_SIGNED + _PERCENT + r" of " + _SIGNED + _NOT_A_FACTOR, _share),
        (r"what (?:percent|percentage)(?: of \S+)? is " + _SIGNED + r" (?:of|out of) " + _SIGNED,
         _ratio),
        (_SIGNED + r" is what (?:percent|percentage) of " + _SIGNED, _ratio),
        (r"what (?:percent|percentage) of " + _SIGNED + r" is " + _SIGNED,
         lambda match: _ratio(match, swapped=True)),
        (_SIGNED + _PERCENT + r" off(?: of)? " + _SIGNED + _NOT_A_FACTOR,
         lambda match: _changed(match.group(2), match.group(1), "-")),
        (r"(?:decrease|reduce) " + _SIGNED + r" by " + _SIGNED + _PERCENT,
         lambda match: _changed(match.group(1), match.group(2), "-")),
        (_SIGNED + r" (?:minus|less) " + _SIGNED + _PERCENT,
         lambda match: _changed(match.group(1), match.group(2), "-")),
        (r"increase " + _SIGNED + r" by " + _SIGNED + _PERCENT,
         lambda match: _changed(match.group(1), match.group(2), "+")),
        (_SIGNED + r" plus " + _SIGNED + _PERCENT,
         lambda match: _changed(match.group(1), match.group(2), "+")),
    )  # fmt: skip
    for pattern, intent in forms:
        if match := _whole(pattern, text):
            return intent(match)
    return None


def _share(match: re.Match[str]) -> Intent:
    share, whole = match.groups()
    answer = f"{share}% of {whole} is {{result}}."
    return Intent("calculator", {"expression": f"{share}/100*{whole}"}, answer)


def _ratio(match: re.Match[str], *, swapped: bool = False) -> Intent:
    part, whole = match.groups()
    if swapped:
        part, whole = whole, part
    answer = f"{part} is {{result}}% of {whole}."
    return Intent("calculator", {"expression": f"{part}/{whole}*100"}, answer)


def _changed(amount: str, share: str, sign: str) -> Intent:
    said = "plus" if sign == "+" else "less"
    answer = f"{amount} {said} {share}% is {{result}}."
    return Intent("calculator", {"expression": f"{amount}*(1{sign}{share}/100)"}, answer)


def _root_or_power(text: str) -> Intent | None:
    forms = (
        (r"square root of " + _NUMBER, "{0}**0.5", "The square root of {0} is {{result}}."),
        (
            r"sqrt\s*(?:\(\s*" + _NUMBER + r"\s*\)|" + _NUMBER + ")",
            "{0}**0.5",
            "The square root of {0} is {{result}}.",
        ),
        (r"cube root of " + _NUMBER, "{0}**(1/3)", "The cube root of {0} is {{result}}."),
        (r"(?<![-\d.])" + _NUMBER + r" squared", "{0}**2", "{0} squared is {{result}}."),
        (r"(?<![-\d.])" + _NUMBER + r" cubed", "{0}**3", "{0} cubed is {{result}}."),
    )
    for pattern, expression, answer in forms:
        if match := _whole(pattern, text):
            number = next(group for group in match.groups() if group is not None)
            return Intent(
                "calculator", {"expression": expression.format(number)}, answer.format(number)
            )
    return None


def _time_units(text: str) -> Intent | None:
    amount = r"(?:an? |one )?" + _NUMBER + r"?\s*" + _UNIT + r"( and a half)?"
    forms = (
        (r"how many " + _UNIT + r" (?:are |is )?(?:there )?in " + amount, (2, 3, 4, 1)),
        (r"(?:convert )?" + _NUMBER + r" " + _UNIT + r"( and a half)? (?:in|to|into) " + _UNIT,
         (1, 2, 3, 4)),
    )  # fmt: skip
    for pattern, (count_at, unit_at, half_at, into_at) in forms:
        match = _whole(pattern, text)
        if match is None:
            continue
        count = float(match.group(count_at) or 1) + (0.5 if match.group(half_at) else 0)
        unit, into = match.group(unit_at).rstrip("s"), match.group(into_at).rstrip("s")
        shown_count = f"{count:g}"
        factor = _UNITS[unit] / _UNITS[into]
        shown = f"{factor:g}" if factor >= 1 else f"(1/{1 / factor:g})"
        units = unit + ("" if count == 1 else "s")
        return Intent(
            "calculator",
            {"expression": f"{shown_count}*{shown}"},
            f"{shown_count} {units} = {{result}} {into}s.",
        )
    return None


def _time_in(text: str) -> Reading | None:
    pattern = (
        r"\b(?:time|date|day)(?: is it| it is| now| is it now)? in ([a-z][a-z .'-]*?[a-z])"
        r"(?:, ?[a-z][a-z .'-]*)?(?: now| right now)?$"
    )
    match = re.search(pattern, text)
    if match is None or not _all_filler(text[: match.start()], _FILLER | {"current", "local"}):
        return None
    place = match.group(1).strip()
    zone = zone_of(place)
    if zone is not None:
        return Intent("current_time", {"timezone": zone}, "It is {result}.")
    if len(place.split()) <= 3:
        return Unknown(f"I don't know the time zone of {place.title()}.")
    return None


def zone_of(place: str) -> str | None:
    """The IANA time zone of a city ('new york' -> 'America/New_York') or a zone's own
    short name ('utc' -> 'UTC'), or None."""
    place = place.strip().lower().removeprefix("the ")
    if place.upper() in available_timezones():
        return place.upper()
    return _zones().get(place.replace(" ", "_"))


@cache
def _zones() -> dict[str, str]:
    """IANA zones by their city, lower case ('new_york' -> 'America/New_York')."""
    zones: dict[str, str] = {}
    for zone in sorted(available_timezones()):
        city = zone.rsplit("/", 1)[-1].lower()
        if "/" in zone and not zone.startswith(("Etc/", "SystemV/", "US/")):
            zones.setdefault(city, zone)
    return zones


_DAY_OFFSETS: tuple[tuple[str, Callable[[re.Match[str]], int]], ...] = (
    (r"\b(?:the )?day after tomorrow\b", lambda match: 2),
    (r"\b(?:the )?day before yesterday\b", lambda match: -2),
    (r"\b(\d+|an?) (day|week)s? ago\b", lambda match: -_days(match)),
    (r"\b(\d+|an?) (day|week)s? before today\b", lambda match: -_days(match)),
    (
        r"\bin (\d+|an?) (day|week)s?(?: time)?(?: from (?:now|today))?\b",
        lambda match: _days(match),
    ),
    (r"\b(\d+|an?) (day|week)s? (?:from (?:now|today)|after today)\b", lambda match: _days(match)),
    (r"\byesterday\b", lambda match: -1),
    (r"\btomorrow\b", lambda match: 1),
)


def _day_offset(text: str) -> Intent | None:
    arguments: dict[str, object] = {}
    if (place := re.search(r" in ([a-z][a-z .'-]*[a-z])$", text)) and (
        zone := zone_of(place.group(1))
    ):
        arguments["timezone"] = zone
        text = text[: place.start()]
    for pattern, offset in _DAY_OFFSETS:
        match = re.search(pattern, text)
        if match is not None:
            if not _only_filler(text, match, _DATE_FILLER):
                return None
            days = offset(match)
            break
    else:
        return None
    when = f"{abs(days)} day{'s' * (abs(days) != 1)}"
    said = (
        "Yesterday" if days == -1 else "Tomorrow" if days == 1
        else f"{when} ago" if days < 0 else f"In {when}"
    )  # fmt: skip
    verb = "was" if days < 0 else "will be"
    return Intent(
        "current_time",
        {**arguments, "days": days},
        f"{said[0].upper()}{said[1:]} it {verb} {{weekday}}, {{date}}.",
    )


def _days(match: re.Match[str]) -> int:
    count = 1 if match.group(1) in ("a", "an") else int(match.group(1))
    return count * (7 if match.group(2) == "week" else 1)


def _arithmetic(text: str) -> Intent | None:
    found = _arithmetic_in(text)
    if found is None or not _all_filler(found[1]):
        return None
    expression = found[0]
    return Intent("calculator", {"expression": expression}, f"{expression} = {{result}}.")


def _clock(text: str) -> Intent | None:
    for match in re.finditer(_CLOCK, text):
        if _only_filler(text, match):
            return Intent("current_time", {}, "It is {result}.")
    return None


def find_arithmetic(text: str) -> str | None:
    """The arithmetic expression in a question, e.g. '17*23' in 'what is 17*23?'."""
    found = _arithmetic_in(text)
    return found[0] if found else None


def _arithmetic_in(text: str) -> tuple[str, str] | None:
    """The longest arithmetic expression in `text`, and the text around it."""
    lowered = f" {text.lower()} "
    for pattern, symbol in _WORDS_INTO_SYMBOLS:
        lowered = re.sub(pattern, symbol, lowered)
    best: tuple[str, str] | None = None
    for match in _ARITHMETIC.finditer(lowered):
        candidate = match.group().strip().rstrip(".").replace("x", "*")
        if _IS_ARITHMETIC.search(candidate) and (best is None or len(candidate) > len(best[0])):
            best = candidate, lowered[: match.start()] + " " + lowered[match.end() :]
    return best


def word_result(intent: Intent, result: str) -> str:
    """The answer to the question from the tool's result."""
    if intent.tool == "current_time" and "days" in intent.arguments:
        match = re.match(r"(\d{4}-\d\d-\d\d) .*, (\w+)\)$", result)
        if match:
            return intent.answer.format(date=match.group(1), weekday=match.group(2))
    return intent.answer.format(result=result)


# --- questions about documents ------------------------------------------------------

_STOP_WORDS = _word_set(
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
