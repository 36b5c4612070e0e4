"""Big MCP results: what one costs the process that reads it, and every other run on its
event loop, through the SDK's own stdio reader and through Oracle's bounded one, and over
Streamable HTTP through the SDK's client alone and through Oracle's bounded transport.

Run: `python bench/mcp_bytes.py [--sizes 30,80] [--timeout 15] [--after 10] [--http]`.

For each size (MB of text, the testing server's `huge`, `tests/mcp/testing_server.py`)
and each reader, in a fresh process: two testing servers over stdio; one call of `huge`
with a ceiling of `--timeout` s, while a task sleeps 50 ms again and again (the event
loop's lag: how late it wakes) and the other server's `echo` is called every 0.1 s; then
`--after` s more of `echo` (a reader still busy with the cancelled call's rest shows
here). Figures: the big call's wall time and outcome, the process's peak memory growth
(VmHWM, reset before the call), its CPU seconds, the worst loop lag, the slowest `echo`
during and after. "SDK" is `mcp.Client` over `mcp.client.stdio.stdio_client`; "Oracle" is
an `McpHub` (ORACLE_TOOL_RESULT_MAX_BYTES at its default, 4 MiB). With `--http`, two more
readers: the big server is the testing server over Streamable HTTP (a JSON answer, the
SDK server's default for a tool that says nothing first): "SDK alone, HTTP" is `mcp.Client`
over `streamable_http_client`, "Oracle, HTTP" an `McpHub` (`agents/mcp_http_bytes.py`).

Then a storm: the testing server's `storm` sends 5,000 progress notices; the figure is
how many reach the run as `tool.progress` events through Oracle (at most four a second).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def peak_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) / 1024  # type: ignore[index]


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


async def lagging(stop: asyncio.Event, lags: list[float]) -> None:
    while not stop.is_set():
        started = time.monotonic()
        await asyncio.sleep(0.05)
        lags.append(time.monotonic() - started - 0.05)


async def measure(reader: str, size_mb: int, ceiling: float, after: float) -> dict[str, Any]:
    """One size through one reader, in this process."""
    from contextlib import AsyncExitStack

    from agents.mcp import McpHub
    from agents.mcp_config import parse_mcp_config
    from tests.mcp.served import mcp_testing_server

    servers = {"big": {**mcp_testing_server(), "timeout_seconds": ceiling}}
    servers["small"] = mcp_testing_server()
    async with AsyncExitStack() as stack:
        if reader.endswith("http"):
            servers["big"] = {"url": serve_http(stack), "timeout_seconds": ceiling}
        config = parse_mcp_config({"mcpServers": servers})
        if reader.startswith("oracle"):
            hub = McpHub(config.servers)
            await hub.start()
            stack.push_async_callback(hub.close)

            async def big() -> str:
                tools = {t.name: hub.tool(t) for t in hub.tools()}
                output = await tools["big__huge"].function(chars=size_mb * 1_000_000)
                return "cut, noted" if "Cut by Oracle" in output.text else "whole"

            async def echo() -> None:
                await hub.servers["small"].call("echo", {"text": "hi"})
        else:
            from mcp import Client
            from mcp.client.stdio import StdioServerParameters, stdio_client

            clients = {}
            if reader == "sdk-http":
                from mcp.client.streamable_http import streamable_http_client

                clients["big"] = await stack.enter_async_context(
                    Client(streamable_http_client(servers["big"]["url"]))
                )
            for server in config.servers:
                if server.name in clients:
                    continue
                params = StdioServerParameters(
                    command=server.command, args=list(server.args), env=server.env
                )
                clients[server.name] = await stack.enter_async_context(
                    Client(stdio_client(params, errlog=sys.__stderr__))
                )

            async def big() -> str:
                async with asyncio.timeout(ceiling):
                    await clients["big"].call_tool("huge", {"chars": size_mb * 1_000_000})
                return "whole"

            async def echo() -> None:
                await clients["small"].call_tool("echo", {"text": "hi"})

        await echo()
        reset_peak()
        before, cpu = peak_mb(), time.process_time()
        stop, lags = asyncio.Event(), []
        sampler = asyncio.create_task(lagging(stop, lags))
        started = time.monotonic()
        call = asyncio.create_task(big())
        during: list[float] = []
        while not call.done():
            began = time.monotonic()
            await echo()
            during.append(time.monotonic() - began)
            await asyncio.sleep(0.1)
        try:
            outcome = await call
        except Exception as error:  # the SDK's call timing out
            outcome = f"failed ({type(error).__name__})"
        took = time.monotonic() - started
        later: list[float] = []
        end = time.monotonic() + after
        while time.monotonic() < end:
            began = time.monotonic()
            await echo()
            later.append(time.monotonic() - began)
            await asyncio.sleep(0.1)
        stop.set()
        await sampler
        return {
            "reader": reader,
            "size_mb": size_mb,
            "seconds": round(took, 2),
            "outcome": outcome,
            "grew_mb": round(peak_mb() - before),
            "cpu_s": round(time.process_time() - cpu, 1),
            "lag_ms": round(max(lags) * 1000),
            "echo_during_ms": round(max(during, default=0) * 1000),
            "echo_after_ms": round(max(later, default=0) * 1000),
        }


def serve_http(stack: Any) -> str:
    """Our testing server over Streamable HTTP, ended with `stack`: its address."""
    import os
    import socket

    from tests.mcp.served import free_port

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp.testing_server", "--http", str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    stack.callback(server.wait, 10)
    stack.callback(server.terminate)
    deadline = time.monotonic() + 30
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert time.monotonic() < deadline, "the testing server did not listen"
        time.sleep(0.1)
    return f"http://127.0.0.1:{port}/mcp"


async def storm(count: int) -> int:
    """How many `tool.progress` events a run gets of `count` notices, through Oracle."""
    from agents.config import AgentConfig
    from agents.events import EventCollector
    from agents.loop import RunDeps, start_run
    from agents.mcp import McpHub
    from agents.mcp_config import parse_mcp_config
    from agents.testing.scripted import Call, Reply, ScriptedModel
    from agents.tools import ToolRegistry
    from agents.tree import DefaultDecisionTree
    from tests.mcp.served import mcp_testing_server

    config = parse_mcp_config({"mcpServers": {"testing": mcp_testing_server()}})
    hub = McpHub(config.servers)
    await hub.start()
    try:
        tools = ToolRegistry([hub.tool(t) for t in hub.tools()])
        model = ScriptedModel(
            [Reply(calls=[Call("testing__storm", {"count": count})]), Reply(text="Done.")]
        )
        deps = RunDeps(model=model, tree=DefaultDecisionTree(AgentConfig()), tools=tools)
        events = EventCollector()
        await start_run("Storm", deps, on_event=events)
        return len(events.of_type("tool.progress"))
    finally:
        await hub.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="30,80", help="MB of text, comma-separated")
    parser.add_argument("--timeout", type=float, default=15.0)
    parser.add_argument("--after", type=float, default=10.0)
    parser.add_argument("--http", action="store_true", help="also over Streamable HTTP")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # reader:size, in a child
    options = parser.parse_args()
    if options.one:
        reader, size = options.one.split(":")
        figures = asyncio.run(measure(reader, int(size), options.timeout, options.after))
        print(json.dumps(figures))
        return
    print(
        "| reader | result | call | outcome | memory growth | CPU | worst loop lag "
        "| slowest echo during | slowest echo after |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for size in (int(s) for s in options.sizes.split(",")):
        for reader in ("sdk", "oracle", "sdk-http", "oracle-http")[: 4 if options.http else 2]:
            child = subprocess.run(
                [sys.executable, __file__, "--one", f"{reader}:{size}",
                 "--timeout", str(options.timeout), "--after", str(options.after)],
                capture_output=True, text=True, check=True, cwd=ROOT,
            )  # fmt: skip
            f = json.loads(child.stdout.strip().splitlines()[-1])
            name = ("SDK alone" if reader.startswith("sdk") else "Oracle") + (
                ", HTTP" if reader.endswith("http") else ""
            )
            print(
                f"| {name} | {size} MB | {f['seconds']} s | {f['outcome']} | "
                f"{f['grew_mb']} MB | {f['cpu_s']} s | {f['lag_ms']} ms | "
                f"{f['echo_during_ms']} ms | {f['echo_after_ms']} ms |"
            )
    print()
    print(f"5,000 progress notices reached the run as {asyncio.run(storm(5000))} events.")


if __name__ == "__main__":
    main()
