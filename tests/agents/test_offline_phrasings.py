"""The offline model on what people type: each phrasing with the answer it must give,
and the ones it must decline rather than guess."""

# ruff: noqa: RUF001 (the signs of typeset maths, times, divided by and minus, are the point)

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agents.builtin_tools import builtin_tools
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, start_run
from agents.offline_model import OfflineModel
from agents.tree import DefaultDecisionTree


async def answer(question: str) -> tuple[str, list[str]]:
    deps = RunDeps(
        model=OfflineModel(), tree=DefaultDecisionTree(AgentConfig()), tools=builtin_tools()
    )
    events = EventCollector()
    result = await start_run(question, deps, on_event=events)
    return result.final_text, [call["name"] for call in events.of_type("tool.call")]


def day(offset: int) -> str:
    when = datetime.now(UTC) + timedelta(days=offset)
    return f"{when:%A}, {when:%Y-%m-%d}"


COMPUTED = [
    ("what is 17*23", "391"),
    ("What's 15% of 80?", "15% of 80 is 12."),
    ("what is 20 percent of 50", "20% of 50 is 10."),
    ("12.5% of 200", "is 25."),
    ("what percent is 30 of 120?", "30 is 25% of 120."),
    ("twelve times seven", "= 84."),
    ("what is one hundred and five plus three", "= 108."),
    ("two thousand three hundred minus forty-five", "= 2255."),
    ("What is the square root of 144?", "The square root of 144 is 12."),
    ("sqrt(2)", "The square root of 2 is 1.41421356237."),
    ("cube root of 27", "The cube root of 27 is 3."),
    ("2 to the power of 10", "= 1024."),
    ("what is 5 squared", "5 squared is 25."),
    ("3 cubed?", "3 cubed is 27."),
    ("Compute (2 + 3) ^ 2 please.", "= 25."),
    ("10 / 4", "= 2.5."),
    ("1/3", "= 0.333333333333."),
    ("what is seven divided by two", "= 3.5."),
    ("how many seconds in 3 hours", "3 hours = 10800 seconds."),
    ("How many minutes are in 2.5 hours?", "2.5 hours = 150 minutes."),
    ("how many days in three weeks?", "3 weeks = 21 days."),
    ("how many hours in a day", "1 day = 24 hours."),
    ("how many minutes are there in a week", "1 week = 10080 minutes."),
    ("What time is it?", "It is 20"),
    ("what time is it in Tokyo?", "(Asia/Tokyo,"),
    ("What's the time in New York", "(America/New_York,"),
    ("what time is it in UTC", "(UTC,"),
    ("what day is it in Tokyo?", "(Asia/Tokyo,"),
    ("what is today's date", "It is 20"),
    ("what is 15% off 80", "80 less 15% is 68."),
    ("what is 80 plus 15%", "80 plus 15% is 92."),
    ("increase 200 by 10 percent", "200 plus 10% is 220."),
    ("what percentage of 80 is 20?", "20 is 25% of 80."),
    ("20 is what percent of 80", "20 is 25% of 80."),
    ("what is 3.5% of 1,200", "3.5% of 1200 is 42."),
    ("what is 50 percent of -20", "50% of -20 is -10."),
    ("what is 1,000 + 2,500", "= 3500."),
    ("what is half of 50", "50 / 2 = 25."),
    ("what is a third of ninety", "90 / 3 = 30."),
    ("what is twice 12", "2 * 12 = 24."),
    ("what is 3 squared plus 4 squared", "3 ** 2 + 4 ** 2 = 25."),
    ("what is -8 squared", "(-8) ** 2 = 64."),
    ("what is 10 to the power of minus 2", "= 0.01."),
    ("what is 7 mod 3", "7 % 3 = 1."),
    ("how many seconds in a minute and a half", "1.5 minutes = 90 seconds."),
    ("convert 2 hours to minutes", "2 hours = 120 minutes."),
    ("90 minutes in hours", "90 minutes = 1.5 hours."),
]


@pytest.mark.parametrize(("question", "expected"), COMPUTED)
async def test_it_answers_what_people_type(question: str, expected: str) -> None:
    text, calls = await answer(question)
    assert expected in text
    assert len(calls) == 1


# The signs a phone's keyboard or a copied formula gives: times, divided by, minus.
TYPESET = [
    ("what is 6 × 7", "6 * 7 = 42."),
    ("84 ÷ 4", "84 / 4 = 21."),
    ("10 − 4", "10 - 4 = 6."),
    ("(2 + 3) × 4 − 1", "(2 + 3) * 4 - 1 = 19."),
    ("3×4÷2", "3*4/2 = 6."),
    ("what is 50% of −20", "50% of -20 is -10."),
    ("what is −8 squared", "(-8) ** 2 = 64."),
]


@pytest.mark.parametrize(("question", "expected"), TYPESET)
async def test_it_reads_times_divided_by_and_minus_as_typeset(question: str, expected: str) -> None:
    text, calls = await answer(question)
    assert expected in text
    assert calls == ["calculator"]


@pytest.mark.parametrize(
    ("question", "offset", "said"),
    [
        ("what day was it 3 days ago?", -3, "3 days ago it was"),
        ("What day is it tomorrow?", 1, "Tomorrow it will be"),
        ("what was the date yesterday", -1, "Yesterday it was"),
        ("what day will it be in 2 weeks", 14, "In 14 days it will be"),
        ("which day was it a week ago", -7, "7 days ago it was"),
        ("what is the day after tomorrow", 2, "In 2 days it will be"),
        ("what day was it the day before yesterday?", -2, "2 days ago it was"),
        ("what's the date 3 days from now", 3, "In 3 days it will be"),
    ],
)
async def test_it_counts_days_from_today(question: str, offset: int, said: str) -> None:
    text, calls = await answer(question)
    assert f"{said} {day(offset)}." in text
    assert calls == ["current_time"]


@pytest.mark.parametrize(
    ("question", "declined"),
    [
        ("What time is it in Atlantis?", "I don't know the time zone of Atlantis."),
        ("Who wrote Hamlet?", "but not answer this"),
        ("what happened in 1969", "but not answer this"),
        ("I had twelve apples and ate some, how many are left?", "but not answer this"),
        ("what is 5 divided by 0", "I can't answer that: division by zero"),
        ("what is 10**1000000", "I can't answer that"),
        # Each of these was once answered with a confident wrong figure or time.
        ("my phone number is 555-1234", "but not answer this"),
        ("what happened between 1939-1945", "but not answer this"),
        ("what is 20% of 50% of 200", "but not answer this"),
        ("what is 1e3 + 1", "but not answer this"),
        ("what is 1,5 + 2", "but not answer this"),
        ("what is 12:30 plus 2 hours", "but not answer this"),
        ("what's 5 times 5 and 3 times 3", "but not answer this"),
        ("how many hours in 3 days and 2 hours", "but not answer this"),
        ("what day of the week is 2024-12-25", "but not answer this"),
        ("what time was it 3 hours ago", "but not answer this"),
        ("what will the date be in a month", "but not answer this"),
        ("what time zone is Berlin in", "but not answer this"),
        ("what's the weather tomorrow", "but not answer this"),
        ("How do I change the time limit?", "but not answer this"),
    ],
)
async def test_it_declines_what_it_cannot_answer_rather_than_guess(
    question: str, declined: str
) -> None:
    text, calls = await answer(question)
    assert declined in text
    if "but not answer this" in declined:
        assert calls == []
