"""How the offline model answers a greeting: like a host, saying what it can do here.

A message that only greets ("hi", "hello there", "good morning, Oracle!") is answered
with a short welcome naming what the tools offered allow: answers from your documents,
their summary, arithmetic, the time. Never how the site is set up (models, limits,
configuration): that is the operator's business, not the greeted person's. A greeting
followed by a question is a question ("hi, what is 17*23?"). Thanks get a "You're
welcome!".
"""

from __future__ import annotations

import re

from agents.offline_documents import SEARCH_TOOL
from agents.offline_summary import LIST_TOOL

_HELLO = (
    r"(?:hi|hello|hey|hiya|howdy|greetings|yo|good (?:morning|afternoon|evening|day)|morning"
    r"|how are you(?: doing)?(?: today)?|how s it going)"
)
_GREETING = re.compile(r"(?:" + _HELLO + r"(?: there| again| all| everyone| oracle| friend)*\s*)+")
_THANKS = re.compile(
    r"(?:(?:ok|okay|great|perfect|nice|cool|brilliant) )?(?:thanks|thank you|thx|cheers)"
    r"(?: (?:so |very )?much| a lot| again)?(?: oracle)?"
)
YOU_ARE_WELCOME = "You're welcome! Ask me anything else whenever you like."
_ABILITIES = (
    (SEARCH_TOOL, "answer questions from your documents with quotes and their sources"),
    (LIST_TOOL, "summarise your documents"),
    ("calculator", "do arithmetic (like 15% of 80)"),
    ("current_time", "tell the time and the date (in other cities too)"),
)


def is_greeting(message: str) -> bool:
    """Whether `message` only greets (its punctuation and smileys aside)."""
    words = _words(message)
    return bool(words) and _GREETING.fullmatch(words) is not None


def is_thanks(message: str) -> bool:
    """Whether `message` only thanks ("thanks!", "great, thank you")."""
    return _THANKS.fullmatch(_words(message)) is not None


def _words(message: str) -> str:
    return " ".join(re.sub(r"[^a-z\s]", " ", message.lower()).split())


def greeting(message: str, offered: set[str]) -> str:
    """A short welcome, in kind ("Good morning!"), naming what the `offered` tools allow."""
    said = re.search(r"good (?:morning|afternoon|evening)", message.lower())
    hello = f"{said.group().capitalize()}!" if said else "Hello!"
    abilities = [ability for tool, ability in _ABILITIES if tool in offered]
    if not abilities:
        return f"{hello} I'm the Oracle. What would you like to know?"
    listed = " and ".join(
        [", ".join(abilities[:-1]), abilities[-1]] if abilities[1:] else abilities
    )
    return f"{hello} I'm the Oracle. Here I can {listed}. What would you like to know?"
