"""The user's custom instructions in a run's system prompt.

They come after the run's own prompt (the Oracle's, or a subagent's), introduced and
set between tags, so the model reads them as the user's wishes under its own rules. The
prompt is written from the settings each time a run is driven (started, continued,
resumed), so a continued run follows the instructions as they are now.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.model import Message

INTRO = (
    "The user has set these custom instructions for every run. Follow them where they "
    "apply, unless they conflict with the instructions above or with your limits."
)
OPEN, CLOSE = "<custom_instructions>", "</custom_instructions>"
_SEPARATOR = f"\n\n{INTRO}\n{OPEN}\n"


def with_instructions(prompt: str, instructions: str) -> str:
    """`prompt` (without any instructions it had) followed by `instructions`, if any."""
    base = prompt.partition(_SEPARATOR)[0]
    return f"{base}{_SEPARATOR}{instructions}\n{CLOSE}" if instructions else base


def instructions_in(messages: Sequence[Message]) -> str:
    """The instructions a run's system prompt carries ("" for none)."""
    if not messages or messages[0].get("role") != "system":
        return ""
    _, found, rest = str(messages[0].get("content") or "").partition(_SEPARATOR)
    return rest.removesuffix(f"\n{CLOSE}") if found else ""


def apply_instructions(messages: list[Message], instructions: str) -> None:
    """Make the system prompt (the first message) carry `instructions`, and no others."""
    if messages and messages[0].get("role") == "system":
        prompt = str(messages[0].get("content") or "")
        messages[0] = {**messages[0], "content": with_instructions(prompt, instructions)}
