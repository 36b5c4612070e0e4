"""Big MCP results cost a worker no more than ORACLE_TOOL_RESULT_MAX_BYTES, and never
stall the event loop every run shares (issue 38, findings 6 and 12).

Our testing server (`tests/mcp/testing_server.py`, over stdio, started as a worker starts
it) returns 30 and 80 MB of text, ten pictures of 1.9 MB and a storm of 5,000 progress
notices; and a child process writes the lines other servers write (the id last, as the
TypeScript SDK does; a notice; a call's answer after it was cancelled) to the reader.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import pytest_asyncio

from agents.mcp import McpHub
from agents.mcp_config import parse_mcp_config
from agents.mcp_lines import RESULT_TOO_LARGE, Lines, UnknownCut
from agents.testing.scripted import Call, Reply
from agents.tools import ToolRegistry
from tests.mcp.served import mcp_testing_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

MB = 1_000_000
NOTE = "(ORACLE_TOOL_RESULT_MAX_BYTES), so Oracle stopped reading it there"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub() -> AsyncIterator[McpHub]:
    """Two testing servers, as a worker has them: the default cap of 4 MiB a message."""
    config = parse_mcp_config(
        {
            "mcpServers": {
                "testing": {**mcp_testing_server(), "timeout_seconds": 15},
                "other": mcp_testing_server(),
            }
        }
    )
    hub = McpHub(config.servers, max_result_chars=10_000, startup_timeout=30)
    await hub.start()
    yield hub
    await hub.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def roomy() -> AsyncIterator[McpHub]:
    """A testing server whose operator lets a message be 32 MiB: the images' own caps."""
    config = parse_mcp_config({"mcpServers": {"testing": mcp_testing_server()}})
    hub = McpHub(config.servers, max_result_bytes=32 * 1024 * 1024, startup_timeout=30)
    await hub.start()
    yield hub
    await hub.close()


def registry(hub: McpHub) -> ToolRegistry:
    return ToolRegistry([hub.tool(offered) for offered in hub.tools()])


def peak_megabytes() -> float:
    """This process's peak resident memory since it was last reset."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) / 1024  # type: ignore[index]


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


class LoopLag:
    """How late the event loop wakes a task that sleeps 50 ms, again and again."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._stop = asyncio.Event()

    async def __aenter__(self) -> LoopLag:
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(self, *_: object) -> None:
        self._stop.set()
        await self._task

    async def _sample(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            await asyncio.sleep(0.05)
            self.lags.append(time.monotonic() - started - 0.05)


# --- byte limits at the transport (finding 6) --------------------------------------


async def test_a_30_mb_result_is_cut_while_read_and_the_worker_does_not_grow_by_it(hub):
    tools = registry(hub)
    assert (await tools.run("c0", "testing__echo", '{"text": "warm"}')).ok
    reset_peak()
    before = peak_megabytes()
    started = time.monotonic()

    result = await tools.run("c1", "testing__huge", '{"chars": 30000000}')

    grew = peak_megabytes() - before
    assert grew < 25, f"the process grew by {grew:.0f} MB reading a 30 MB result"
    assert time.monotonic() - started < 5
    assert result.ok
    assert result.content.startswith("x" * 10_000 + "\n[Cut by Oracle: the result was larger")
    assert "than 4,194,304 bytes " + NOTE in result.content
    assert "Ask for less" in result.content


async def test_ten_big_pictures_show_at_most_a_results_share_and_name_the_rest(roomy):
    result = await registry(roomy).run("c1", "testing__pictures", '{"count": 10, "size": 1900000}')

    assert result.ok
    assert len(result.attachments) == 2  # 4,000,000 bytes a result: two of 1.9 MB
    lines = result.content.splitlines()
    assert lines[:2] == ["[image (image/png, 1,900,000 bytes), shown to the user]"] * 2
    assert (
        lines[2:]
        == [
            "[image (image/png, 1,900,000 bytes), left out: a result shows at most 4 images "
            "and 4,000,000 bytes of them]"
        ]
        * 8
    )


async def test_a_runs_pictures_stop_at_its_share_and_the_model_is_told(roomy, run):
    call = Call("testing__pictures", {"count": 2, "size": 1900000})
    outcome = await run(
        [Reply(calls=[call]), Reply(calls=[call]), Reply(calls=[call]), Reply(text="Seen.")],
        tools=registry(roomy),
    )

    results = outcome.events.of_type("tool.result")
    assert [len(result.get("attachments") or []) for result in results] == [2, 2, 1]
    assert results[2]["content"].endswith(
        "left out: this run has shown 9,500,000 bytes of images, and a run shows at most "
        "10,000,000]"
    )


async def test_a_picture_cut_by_the_byte_cap_is_not_shown_and_the_cut_is_told(hub):
    result = await registry(hub).run("c1", "testing__pictures", '{"count": 3, "size": 1900000}')

    assert result.ok
    assert len(result.attachments) == 1  # the first whole one; the second was cut
    assert result.content.startswith("[image (image/png, 1,900,000 bytes), shown to the user]")
    assert NOTE in result.content


async def test_a_storm_of_5000_progress_notices_reaches_the_run_as_a_few(hub, run):
    outcome = await run(
        [Reply(calls=[Call("testing__storm", {"count": 5000})]), Reply(text="Done.")],
        tools=registry(hub),
    )

    (result,) = outcome.events.of_type("tool.result")
    assert result["content"] == "reported 5000 times"
    progress = outcome.events.of_type("tool.progress")
    assert 1 <= len(progress) <= 30, f"{len(progress)} progress events"
    assert (progress[-1]["progress"], progress[-1]["total"]) == (5000, 5000)  # the last shown
    types = outcome.events.types()
    assert types.index("tool.progress") < types.index("tool.result")


# --- big results never stall the loop (finding 12) ---------------------------------


async def test_an_80_mb_line_neither_stalls_the_loop_nor_other_servers_calls(hub):
    tools = registry(hub)
    cpu = time.process_time()
    async with LoopLag() as loop:
        started = time.monotonic()
        big = asyncio.create_task(tools.run("c1", "testing__huge", '{"chars": 80000000}'))
        others = []
        while not big.done():
            began = time.monotonic()
            assert (await tools.run("c2", "other__echo", '{"text": "small"}')).ok
            others.append(time.monotonic() - began)
            await asyncio.sleep(0.05)
        result = await big
        took = time.monotonic() - started
        for _ in range(10):  # and after it: nothing is left reading its rest
            began = time.monotonic()
            assert (await tools.run("c3", "testing__echo", '{"text": "after"}')).ok
            others.append(time.monotonic() - began)

    assert result.ok and NOTE in result.content
    assert took < 10, f"the 80 MB call took {took:.1f} s"
    assert max(loop.lags) < 0.1, f"the event loop was {max(loop.lags) * 1000:.0f} ms late"
    assert max(others) < 0.5, f"a small call took {max(others) * 1000:.0f} ms"
    assert time.process_time() - cpu < 5, "reading 80 MB took this process's CPU for seconds"


# --- the reader, against the lines other servers write -----------------------------


async def read_lines(lines: Lines, script: str) -> list[Any]:
    """What `lines` delivers of a child process's output, `script` writing it."""
    delivered: list[Any] = []

    async def deliver(message: Any) -> None:
        delivered.append(message)

    async with await anyio.open_process([sys.executable, "-c", script]) as process:
        await lines.pump(process.stdout, deliver)
    return delivered


def request(id_: int) -> Any:
    from mcp_types import JSONRPCRequest

    return JSONRPCRequest(jsonrpc="2.0", id=id_, method="tools/call", params={"name": "x"})


def cancel(id_: int) -> Any:
    from mcp_types import JSONRPCNotification

    return JSONRPCNotification(
        jsonrpc="2.0", method="notifications/cancelled", params={"requestId": id_}
    )


WRITE = "import sys; out = sys.stdout.buffer\n"


async def test_an_answer_whose_id_comes_last_is_still_cut_and_matched():
    lines = Lines(max_bytes=1 << 20)
    lines.sent(request(4))
    lines.sent(request(5))
    script = WRITE + (
        'out.write(b\'{"result":{"content":[{"type":"text","text":"\' + b"y" * 5_000_000 '
        '+ b\'"}]},"jsonrpc":"2.0","id":5}\\n\')\n'
        'out.write(b\'{"jsonrpc":"2.0","id":4,"result":{"content":[]}}\\n\')\n'
    )

    cut, whole = await read_lines(lines, script)

    assert cut.message.id == 5 and cut.message.error.code == RESULT_TOO_LARGE
    (block,) = cut.message.error.data["content"]
    assert block["text"].startswith("yyy") and len(block["text"]) < 1 << 20
    assert whole.message.id == 4 and whole.message.result == {"content": []}


async def test_a_cancelled_calls_answer_is_thrown_away_unparsed():
    lines = Lines(max_bytes=1 << 20)
    lines.sent(request(7))
    lines.sent(cancel(7))
    lines.sent(request(8))
    script = WRITE + (
        'out.write(b\'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"\' '
        '+ b"z" * 900_000 + b\'"}]}}\\n\')\n'
        'out.write(b\'{"jsonrpc":"2.0","id":8,"result":{"content":[]}}\\n\')\n'
    )

    delivered = await read_lines(lines, script)

    assert [message.message.id for message in delivered] == [8]


async def test_a_notice_over_the_cap_is_dropped_and_reading_goes_on():
    lines = Lines(max_bytes=1 << 20)
    lines.sent(request(1))
    script = WRITE + (
        'out.write(b\'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"\' '
        '+ b"n" * 3_000_000 + b\'"}}\\n\')\n'
        'out.write(b\'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}\\n\')\n'
    )

    delivered = await read_lines(lines, script)

    assert [message.message.id for message in delivered] == [1]


async def test_a_cut_line_whose_call_cannot_be_told_ends_the_connection():
    lines = Lines(max_bytes=1 << 20)
    lines.sent(request(1))
    lines.sent(request(2))
    script = WRITE + (
        'out.write(b\'{"result":{"content":[{"type":"text","text":"\' + b"q" * 3_000_000 '
        '+ b\'"}]},"id":2,"extra":true}\\n\')\n'
    )

    with pytest.raises(UnknownCut, match="its connection is ended and made again"):
        await read_lines(lines, script)
