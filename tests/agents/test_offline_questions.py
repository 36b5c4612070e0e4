"""The offline model on a greeting, and on a message that asks more than one thing: it
greets like a host, and answers each question, saying which it cannot answer and why."""

from __future__ import annotations

import pytest

from agents.builtin_tools import builtin_tools
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, RunResult, start_run
from agents.offline_model import HOW_TO_CONFIGURE, OfflineModel
from agents.offline_questions import MAX_QUESTIONS, questions_in
from agents.tree import DefaultDecisionTree
from tests.agents.offline_library import BUDGET, Library, ask


async def answer(question: str) -> tuple[RunResult, list[str]]:
    deps = RunDeps(
        model=OfflineModel(), tree=DefaultDecisionTree(AgentConfig()), tools=builtin_tools()
    )
    events = EventCollector()
    result = await start_run(question, deps, on_event=events)
    return result, [call["name"] for call in events.of_type("tool.call")]


GREETINGS = [
    "hi",
    "Hello!",
    "hey there",
    "Good morning",
    "hello Oracle",
    "Hi there :)",
    "hey, how are you?",
]
# What an operator sets up, never what a greeting tells the person who said hello.
BACKSTAGE = ["oracle_model", "configure", "model", "limit", "budget", "setting", "api"]


@pytest.mark.parametrize("greeting", GREETINGS)
async def test_a_greeting_is_answered_with_what_it_can_do_here(greeting: str) -> None:
    library = Library()
    asked = await ask(greeting, library)

    assert asked.calls == []
    text = asked.text
    assert text.startswith(("Hello!", "Good morning!"))
    assert "I'm the Oracle" in text
    for ability in ("your documents", "summarise", "arithmetic", "the time"):
        assert ability in text
    assert not [word for word in BACKSTAGE if word in text.lower()]
    assert len(text) < 400  # short


async def test_a_greeting_names_only_what_the_tools_here_allow() -> None:
    result, calls = await answer("hey")

    assert calls == []
    assert "arithmetic" in result.final_text and "the time" in result.final_text
    assert "documents" not in result.final_text
    assert HOW_TO_CONFIGURE not in result.final_text


@pytest.mark.parametrize("thanks", ["thanks!", "Thank you so much", "great, thanks"])
async def test_thanks_are_answered_in_kind(thanks: str) -> None:
    result, calls = await answer(thanks)

    assert calls == []
    assert result.final_text.startswith("You're welcome!")
    assert HOW_TO_CONFIGURE not in result.final_text


async def test_good_morning_is_answered_in_kind() -> None:
    result, _ = await answer("good morning!")

    assert result.final_text.startswith("Good morning!")


@pytest.mark.parametrize(
    ("question", "tool"),
    [("hello, what is 17*23?", "calculator"), ("hi, what time is it?", "current_time")],
)
async def test_a_question_after_a_greeting_is_answered(question: str, tool: str) -> None:
    result, calls = await answer(question)

    assert calls == [tool]
    assert "I'm the Oracle" not in result.final_text


async def test_it_answers_two_questions_in_one_message() -> None:
    result, calls = await answer("What is 17*23? And what time is it?")

    assert calls == ["calculator", "current_time"]
    text = result.final_text
    assert "17*23 = 391." in text
    assert "It is 20" in text
    assert text.index("**What is 17\\*23?**") < text.index("**What time is it?**")
    assert text.count("(Answered by the offline model.)") == 1
    assert result.reason is not None and result.reason.value == "completed"


async def test_a_call_two_questions_need_is_made_once() -> None:
    result, calls = await answer("What time is it? What's the date? What year is it?")

    assert calls == ["current_time"]  # the same call again would be no progress
    assert result.final_text.count("It is 20") == 3
    assert result.reason is not None and result.reason.value == "completed"


async def test_it_answers_what_it_can_and_says_which_it_cannot_and_why() -> None:
    library = Library()
    asked = await ask("what is the token budget and who won the 1998 world cup?", library)

    assert asked.calls == ["search_documents", "read_document", "search_documents"]
    assert [search["query"] for search in library.searches] == [
        "token budget",
        "won 1998 world cup",
    ]
    text = asked.text
    assert text.startswith("**What is the token budget?**\n\nHere is what I found in *Release")
    (quote,) = asked.quotes
    assert BUDGET.startswith(quote.removesuffix("…"))
    assert (
        "**Who won the 1998 world cup?**\n\nI found nothing about that in your documents." in text
    )
    assert text.count(HOW_TO_CONFIGURE) == 1 and text.endswith(HOW_TO_CONFIGURE)


async def test_a_question_it_cannot_answer_beside_one_it_can() -> None:
    result, calls = await answer("What time is it? Who wrote Hamlet?")

    assert calls == ["current_time"]
    text = result.final_text
    assert "**What time is it?**\n\nIt is 20" in text
    assert "**Who wrote Hamlet?**\n\nI am the Oracle's offline model" in text
    assert "but not answer this." in text


@pytest.mark.parametrize(
    ("message", "questions"),
    [
        ("What is 17*23? And what time is it?", ["What is 17*23?", "what time is it?"]),
        (
            "what is the token budget and who won the 1998 world cup?",
            ["what is the token budget", "who won the 1998 world cup?"],
        ),
        (
            "How do I stop a run, and what happens to its answer?",
            ["How do I stop a run", "what happens to its answer?"],
        ),
        ("what time is it? what time is it?", ["what time is it?"]),
        # One question each: "and" joins two things asked about, or no question follows.
        ("what's 5 times 5 and 3 times 3", ["what's 5 times 5 and 3 times 3"]),
        ("how many hours in 3 days and 2 hours", ["how many hours in 3 days and 2 hours"]),
        ("What do my documents say about limits and Limit?", None),
        ("what is the difference between what I have and what I need?", None),
        ("Where and when is the meeting?", None),
        ("I know what it is and what it does", None),
        ("who won and why?", None),
        ("Hello! What is 17*23?", ["What is 17*23?"]),
        ('What does "why?" mean in the guide?', None),
        ("How do I change the limit? I mean the iteration limit.", None),
        ("Who won the 1998 world cup? Tell me.", None),
        ("What is 17*23? what time is it", ["What is 17*23?", "what time is it"]),
        ("and 3*3?", ["3*3?"]),
    ],
)
def test_a_message_is_split_into_its_questions(message: str, questions: list[str] | None) -> None:
    assert questions_in(message) == (questions or [message])


async def test_at_most_a_few_questions_are_answered_and_the_rest_named() -> None:
    message = " ".join(f"what is {n}*{n}?" for n in range(1, MAX_QUESTIONS + 3))
    result, calls = await answer(message)

    assert calls == ["calculator"] * MAX_QUESTIONS
    assert f"{MAX_QUESTIONS}*{MAX_QUESTIONS} = {MAX_QUESTIONS**2}." in result.final_text
    assert f"{MAX_QUESTIONS + 1}*{MAX_QUESTIONS + 1} =" not in result.final_text
    assert "ask the other 2 again" in result.final_text
