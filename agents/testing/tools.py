"""Tools for trying Oracle's run control by hand and in tests (name them in ORACLE_TOOLS)."""

from __future__ import annotations

import asyncio

from agents.tools import ToolError

MAX_WAIT_SECONDS = 60.0


async def wait(seconds: float) -> str:
    """Wait for a number of seconds, then say so: a slow tool, to see a stop or a lost
    worker land while a tool runs.

    Args:
        seconds: How long to wait, up to 60.
    """
    if not 0 <= seconds <= MAX_WAIT_SECONDS:
        raise ToolError(f"seconds must be between 0 and {MAX_WAIT_SECONDS:g}")
    await asyncio.sleep(seconds)
    return f"Waited {seconds:g} seconds."


wait.idempotent = True  # type: ignore[attr-defined]  # waiting twice does no harm


LONG_TEXT_PIECE = 6_000
_LONG_TEXT_WORDS = ("owl", "river", "stone", "lantern", "maple", "harbor", "ember", "canyon")


def long_text(part: int) -> str:
    """Read one 6,000-character part of a long made-up text: a tool whose results soon
    fill a model's context, to see Oracle keep each request inside the window.

    Args:
        part: Which part to read, from 0 to 99.
    """
    if not 0 <= part <= 99:
        raise ToolError("part must be between 0 and 99")
    words = (_LONG_TEXT_WORDS[(part * 7 + i * i) % len(_LONG_TEXT_WORDS)] for i in range(2_000))
    return f"Part {part}: {' '.join(words)}"[:LONG_TEXT_PIECE]
