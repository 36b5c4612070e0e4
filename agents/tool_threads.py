"""Where a sync tool runs: a daemon thread of its own for each call, which a Stop can
leave behind without holding anything shared."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable, Mapping
from typing import Any


def in_own_thread(
    function: Callable[..., Any], arguments: Mapping[str, Any], *, name: str
) -> asyncio.Future[Any]:
    """Call `function(**arguments)` on a new daemon thread; the future gets its outcome.

    Not `asyncio.to_thread`: a thread cannot be stopped, so a tool cut short by a
    Stop or the time limit runs on until it returns, and in the loop's default
    executor it would hold one of a few threads shared by every run of the worker
    process (and by anything else using `to_thread`); a handful of stuck tools
    would stall them all. A thread per call holds nothing shared and ends when the
    tool returns; starting one costs far less than any tool worth a thread. Being
    a daemon, a stuck tool does not keep the process from exiting either.

    Cancelling the future abandons the call: its outcome, even an exception, is
    dropped without being logged, as is one arriving after the loop has closed.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()  # as `to_thread` does

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():  # cancelled: no one is waiting
            return
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)

    def work() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = context.run(function, **arguments)
        except BaseException as raised:  # delivered to the caller, as `to_thread` does
            error = raised
        with contextlib.suppress(RuntimeError):  # the loop has closed: no one is waiting
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name=name, daemon=True).start()
    return future
