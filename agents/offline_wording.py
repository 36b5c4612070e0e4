"""What the offline model says, word for word, apart from the passages it quotes.

Its answers from a tool's result, what it says when a tool failed, when a question
is beyond it or its documents hold nothing about it, and, once per conversation,
how to configure a real model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.offline_forms import Intent

HOW_TO_CONFIGURE = (
    "To get real answers, configure a model: set ORACLE_MODEL to a LiteLLM model string, "
    "e.g. ORACLE_MODEL=openai/gpt-4o-mini with OPENAI_API_KEY set."
)
CALCULATING = (
    "I can do arithmetic (in digits or words, percentages, powers and roots, units of time) "
    "and tell the time and the date"
)
# How an answer from a tool is signed as the offline model's.
SIGNATURE = " (Answered by the offline model.)"
NOTHING_FOUND = "I found nothing about that in your documents."
WHAT_I_CAN_DO_WITH_DOCUMENTS = (
    "Offline, I can only quote your documents, do arithmetic and tell the time and the date."
)


def word_result(intent: Intent, result: str) -> str:
    """The answer to the question from the tool's result."""
    if intent.tool == "current_time" and "days" in intent.arguments:
        match = re.match(r"(\d{4}-\d\d-\d\d) .*, (\w+)\)$", result)
        if match:
            return intent.answer.format(date=match.group(1), weekday=match.group(2))
    return intent.answer.format(result=result)


def answered(text: str) -> str:
    """An answer, signed as the offline model's."""
    return text + SIGNATURE


def tool_failed(result: str) -> str:
    """The answer when the tool that was to answer failed (`result`: its error)."""
    return f"I can't answer that: {result.removeprefix('Error: ')}. (Offline model.)"


def beyond_me(hint: str, *, quoting: bool = False) -> str:
    """What the offline model can do, when the question is none of those things
    (`quoting`: it can search your documents)."""
    abilities = "I can quote your documents, " if quoting else "I can "
    return (
        "I am the Oracle's offline model: "
        + abilities
        + CALCULATING.removeprefix("I can ")
        + f", but not answer this.{hint}"
    )


def search_failed(problem: str, hint: str) -> str:
    """The answer when the document search failed (`problem`: why, or '')."""
    problem = f" ({problem})" if problem else ""
    return f"I couldn't search your documents{problem}. {WHAT_I_CAN_DO_WITH_DOCUMENTS}{hint}"


def nothing_found(hint: str) -> str:
    """The answer when no passage found is about the question."""
    return f"{NOTHING_FOUND} {WHAT_I_CAN_DO_WITH_DOCUMENTS}{hint}"


def cannot_see(images: Sequence[str], hint: str) -> str:
    """What the offline model says of the images attached (`images`: each cited, a link
    to its document): it cannot see them, and says so rather than guess."""
    named = images[0] if len(images) == 1 else ", ".join(images[:-1]) + " and " + images[-1]
    one = len(images) == 1
    return (
        f"I cannot see images: {named} {'is' if one else 'are'} attached, but the offline "
        f"model reads text only, so I cannot tell you what {'it shows' if one else 'they show'}."
        + hint
    )
