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
