"""What the offline model reads as a question of time and date, for current_time.

The time now ("what time is it"), in a city or a zone ("the time in New York", whose
zone is looked up by its city), and the day some days before or after today ("in 3
days", "the day after tomorrow"), there too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from zoneinfo import available_timezones

from agents.offline_forms import FILLER, Intent, Reading, Unknown, all_filler, only_filler

# Around a day before or after today: "what day of the week will it be ...".
_DATE_FILLER = FILLER | {"day", "date", "week", "will", "be", "going"}
_CLOCK = re.compile(
    r"\b(?:(?:(?:what|which)(?:'s|s| is)? )?(?:the )?(?:current |today's |todays |local )?"
    r"(?:time|date|day(?: of the week)?|year|month)"
    r"(?: (?:is it|it is|is today|today|now|right now|is))*"
    r"|what(?:'s|s| is) today)\b"
)


def time_in(text: str) -> Reading | None:
    """'what time is it in Tokyo': the time in a city or a zone; a short place name
    whose zone is not known is said to be unknown rather than guessed."""
    pattern = (
        r"\b(?:time|date|day)(?: is it| it is| now| is it now)? in ([a-z][a-z .'-]*?[a-z])"
        r"(?:, ?[a-z][a-z .'-]*)?(?: now| right now)?$"
    )
    match = re.search(pattern, text)
    if match is None or not all_filler(text[: match.start()], FILLER | {"current", "local"}):
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


def day_offset(text: str) -> Intent | None:
    """'what day is it in 3 days', 'yesterday', '2 weeks ago', in a city too."""
    arguments: dict[str, object] = {}
    if (place := re.search(r" in ([a-z][a-z .'-]*[a-z])$", text)) and (
        zone := zone_of(place.group(1))
    ):
        arguments["timezone"] = zone
        text = text[: place.start()]
    for pattern, offset in _DAY_OFFSETS:
        match = re.search(pattern, text)
        if match is not None:
            if not only_filler(text, match, _DATE_FILLER):
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


def clock(text: str) -> Intent | None:
    """'what time is it', 'what is the date today', 'what year is it'."""
    for match in re.finditer(_CLOCK, text):
        if only_filler(text, match):
            return Intent("current_time", {}, "It is {result}.")
    return None
