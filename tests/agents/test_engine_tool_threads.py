"""A sync tool that a Stop cut short holds nothing the worker's other runs need.

All runs of a worker process share one event loop. A sync tool stopped midway
keeps running in its thread until it returns; that thread must not be one the
other runs (or anything else calling `asyncio.to_thread`) wait for.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
import time

import pytest

from agents.cancel import CancelToken
from agents.testing.scripted import Call, Reply
from agents.tools import Tool, ToolRegistry

from .conftest import Outcome, run_script, tool_set

# The threads of the event loop's default executor (ThreadPoolExecutor's own default).
DEFAULT_EXECUTOR_THREADS = min(32, (os.cpu_count() or 1) + 4)


class StuckTools:
    """Sync tools that block until `release()`; each run is stopped once its tool has
    started (or after `STOP_AFTER` seconds, should its tool never start)."""

    STOP_AFTER = 0.5

    def __init__(self, *, fail_when_released: bool = False) -> None:
        self.gate = threading.Event()
        self.threads: list[threading.Thread] = []
        self.fail_when_released = fail_when_released

    def run_stopped_in_tool(self) -> asyncio.Task[Outcome]:
        entered = threading.Event()
        deadline = time.monotonic() + self.STOP_AFTER

        def fetch(url: str) -> str:
            """Fetch a page from a server that never answers.

            Args:
                url: The page.
            """
            self.threads.append(threading.current_thread())
            entered.set()
            self.gate.wait()
            if self.fail_when_released:
                raise ConnectionError("the server hung up")
            return "too late"

        tools = ToolRegistry([Tool.from_function(fetch)])
        cancel = CancelToken(
            check=lambda: entered.is_set() or time.monotonic() > deadline, poll_interval=0.02
        )
        script = [Reply(calls=[Call("fetch", {"url": "https://slow.example"})]), Reply("Hm.")]
        return asyncio.create_task(run_script(script, tools=tools, cancel=cancel))

    def release(self) -> None:
        self.gate.set()
        for thread in self.threads:
            thread.join(timeout=5)


@pytest.fixture
async def stuck():
    tools = StuckTools()
    yield tools
    tools.release()  # before the test's event loop closes, which may wait for them


async def test_runs_stopped_in_a_sync_tool_do_not_hold_up_other_runs_tools(stuck):
    stopped = [stuck.run_stopped_in_tool() for _ in range(DEFAULT_EXECUTOR_THREADS + 4)]
    outcomes = await asyncio.wait_for(asyncio.gather(*stopped), timeout=10)
    assert {outcome.reason for outcome in outcomes} == {"cancelled"}

    started = time.monotonic()
    fresh = asyncio.create_task(
        run_script(
            [Reply(calls=[Call("lookup", {"topic": "owls"})]), Reply("Owls hoot.")],
            tools=tool_set(),  # `lookup` is a sync tool that answers at once
        )
    )
    done, _ = await asyncio.wait([fresh], timeout=2)
    assert fresh in done, "a run's quick sync tool waited behind tools that were stopped"
    assert fresh.result().reason == "completed"
    (result,) = fresh.result().events.of_type("tool.result")
    assert result["content"] == "Notes about owls."
    assert time.monotonic() - started < 2

    other_work = asyncio.ensure_future(asyncio.to_thread(lambda: "done"))
    done, _ = await asyncio.wait([other_work], timeout=2)
    assert other_work in done, "asyncio.to_thread work waited behind tools that were stopped"
    assert len(stuck.threads) == len(stopped)  # the stopped tools were all still running


async def test_a_stopped_tool_that_fails_later_logs_nothing(stuck, caplog):
    stuck.fail_when_released = True
    outcome = await stuck.run_stopped_in_tool()
    assert outcome.reason == "cancelled"
    (result,) = outcome.events.of_type("tool.result")
    assert result["ok"] is False  # the run did not wait for it

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        stuck.release()  # the tool now raises, long after its run ended
        await asyncio.sleep(0.05)  # let the thread's outcome reach the loop
        gc.collect()  # an unretrieved exception is logged when its future is collected
        await asyncio.sleep(0)

    assert caplog.records == []
