"""What the offline model reads as arithmetic, for the calculator tool to work out.

Numbers in digits or words ("one hundred and five"), percentages ("15% of 80", "what
percent is 30 of 120"), powers and roots, units of time ("how many minutes in a
day"), and plain expressions with words or signs for their operators ("12 times 3";
the signs of typeset maths, times, divided by and minus, read as `*`, `/` and `-`). Each
reader returns the `Intent` of a calculator call, or None when the question is not
that form (or has more in it than the form).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agents.offline_forms import NUMBER, SIGNED, Intent, all_filler, whole

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
# Words into arithmetic, longest first; a number after a word is group 1.
_WORDS_INTO_SYMBOLS = (
    (r"\bsquare root of " + NUMBER, r"\1 ** 0.5"),
    (r"\bsqrt\s*\(\s*" + NUMBER + r"\s*\)", r"\1 ** 0.5"),
    (r"\bsqrt " + NUMBER, r"\1 ** 0.5"),
    (r"\bcube root of " + NUMBER, r"\1 ** (1/3)"),
    # A number's own minus is squared with it: "-8 squared" is 64.
    (r"(?<![\d)])(?<![\d)] )-" + NUMBER + r" squared\b", r"(-\1) ** 2"),
    (r"(?<![\d)])(?<![\d)] )-" + NUMBER + r" cubed\b", r"(-\1) ** 3"),
    (NUMBER + r" squared\b", r"\1 ** 2"),
    (NUMBER + r" cubed\b", r"\1 ** 3"),
    (r"\b(?:an? |one )?half of " + NUMBER, r"\1 / 2"),
    (r"\b(?:an? |one )?third of " + NUMBER, r"\1 / 3"),
    (r"\b(?:an? |one )?quarter of " + NUMBER, r"\1 / 4"),
    (r"\b(?:twice|double) " + NUMBER, r"2 * \1"),
    (r"\btriple " + NUMBER, r"3 * \1"),
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

# The signs of typeset maths (a phone's keyboard, a copied formula) as a keyboard types
# them: times, divided by, minus.
_TYPESET_SIGNS = str.maketrans({"\u00d7": "*", "\u00f7": "/", "\u2212": "-"})

_ARITHMETIC = re.compile(r"[-+(]*\d[\d.\s()+\-*/%^x]*")
_IS_ARITHMETIC = re.compile(r"\d\s*\)?\s*(\*\*|[-+*/%^])\s*[-(\s]*\d")


def typed_signs(text: str) -> str:
    """The signs of typeset maths as a keyboard types them: '6 \u00d7 7' -> '6 * 7'."""
    return text.translate(_TYPESET_SIGNS)


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


_NOT_A_FACTOR = r"(?!\s*(?:%|percent|\d|\.\d|\*|/|\^))"


def percent(text: str) -> Intent | None:
    """'15% of 80', 'what percent is 30 of 120', '20% off 50', 'increase 80 by 5%'."""
    forms: tuple[tuple[str, Callable[[re.Match[str]], Intent]], ...] = (
        (SIGNED + _PERCENT + r" of " + SIGNED + _NOT_A_FACTOR, _share),
        (r"what (?:percent|percentage)(?: of \S+)? is " + SIGNED + r" (?:of|out of) " + SIGNED,
         _ratio),
        (SIGNED + r" is what (?:percent|percentage) of " + SIGNED, _ratio),
        (r"what (?:percent|percentage) of " + SIGNED + r" is " + SIGNED,
         lambda match: _ratio(match, swapped=True)),
        (SIGNED + _PERCENT + r" off(?: of)? " + SIGNED + _NOT_A_FACTOR,
         lambda match: _changed(match.group(2), match.group(1), "-")),
        (r"(?:decrease|reduce) " + SIGNED + r" by " + SIGNED + _PERCENT,
         lambda match: _changed(match.group(1), match.group(2), "-")),
        (SIGNED + r" (?:minus|less) " + SIGNED + _PERCENT,
         lambda match: _changed(match.group(1), match.group(2), "-")),
        (r"increase " + SIGNED + r" by " + SIGNED + _PERCENT,
         lambda match: _changed(match.group(1), match.group(2), "+")),
        (SIGNED + r" plus " + SIGNED + _PERCENT,
         lambda match: _changed(match.group(1), match.group(2), "+")),
    )  # fmt: skip
    for pattern, intent in forms:
        if match := whole(pattern, text):
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


def root_or_power(text: str) -> Intent | None:
    """'square root of 16', 'sqrt(2)', 'cube root of 27', '9 squared', '3 cubed'."""
    forms = (
        (r"square root of " + NUMBER, "{0}**0.5", "The square root of {0} is {{result}}."),
        (
            r"sqrt\s*(?:\(\s*" + NUMBER + r"\s*\)|" + NUMBER + ")",
            "{0}**0.5",
            "The square root of {0} is {{result}}.",
        ),
        (r"cube root of " + NUMBER, "{0}**(1/3)", "The cube root of {0} is {{result}}."),
        (r"(?<![-\d.])" + NUMBER + r" squared", "{0}**2", "{0} squared is {{result}}."),
        (r"(?<![-\d.])" + NUMBER + r" cubed", "{0}**3", "{0} cubed is {{result}}."),
    )
    for pattern, expression, answer in forms:
        if match := whole(pattern, text):
            number = next(group for group in match.groups() if group is not None)
            return Intent(
                "calculator", {"expression": expression.format(number)}, answer.format(number)
            )
    return None


def time_units(text: str) -> Intent | None:
    """'how many minutes in a day', '3 hours in minutes', '2 weeks and a half in days'."""
    amount = r"(?:an? |one )?" + NUMBER + r"?\s*" + _UNIT + r"( and a half)?"
    forms = (
        (r"how many " + _UNIT + r" (?:are |is )?(?:there )?in " + amount, (2, 3, 4, 1)),
        (r"(?:convert )?" + NUMBER + r" " + _UNIT + r"( and a half)? (?:in|to|into) " + _UNIT,
         (1, 2, 3, 4)),
    )  # fmt: skip
    for pattern, (count_at, unit_at, half_at, into_at) in forms:
        match = whole(pattern, text)
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


def arithmetic(text: str) -> Intent | None:
    """An expression with its operators in symbols or words: '17*23', '12 times 7'."""
    found = _arithmetic_in(text)
    if found is None or not all_filler(found[1]):
        return None
    expression = found[0]
    return Intent("calculator", {"expression": expression}, f"{expression} = {{result}}.")


def find_arithmetic(text: str) -> str | None:
    """The arithmetic expression in a question, e.g. '17*23' in 'what is 17*23?'."""
    found = _arithmetic_in(text)
    return found[0] if found else None


def _arithmetic_in(text: str) -> tuple[str, str] | None:
    """The longest arithmetic expression in `text`, and the text around it."""
    lowered = f" {typed_signs(text).lower()} "
    for pattern, symbol in _WORDS_INTO_SYMBOLS:
        lowered = re.sub(pattern, symbol, lowered)
    best: tuple[str, str] | None = None
    for match in _ARITHMETIC.finditer(lowered):
        candidate = match.group().strip().rstrip(".").replace("x", "*")
        if _IS_ARITHMETIC.search(candidate) and (best is None or len(candidate) > len(best[0])):
            best = candidate, lowered[: match.start()] + " " + lowered[match.end() :]
    return best
