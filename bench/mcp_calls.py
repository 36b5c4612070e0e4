"""MCP tools: what Oracle adds to a call over the SDK alone, and 50 runs calling at once.

Run: `python bench/mcp_calls.py [--calls 300] [--passes 5] [--runs 50] [--steps 4]`.

1. *Cost per call.* N calls of the testing server's `echo` (`tests/mcp/testing_server.py`)
   through the bare SDK (`mcp.Client.call_tool`, the connection made as `agents/mcp_transport.py`
   makes it) and through Oracle (`ToolRegistry.run` over an `McpHub` tool: the arguments'
   JSON parsed and checked against the tool's schema, the server's ceiling, the result
   turned into a tool result), over stdio and Streamable HTTP. The two take turns, pass
   after pass, on one server process each; the figures are the medians of the passes of
   wall time and of this process's CPU time per call (the client's work, without the
   server's, which shares the machine's cores and makes the wall time noisy).
2. *Runs at once.* `--runs` engine runs on one event loop (as on one worker's run host),
   each asking for `--steps` tool calls, one per model response, through a scripted model,
   all on one shared hub: runs completed, calls the server took against those expected,
   results lost (a run's tool result not the echo of its own arguments: must be 0), and
   the wall time. Once with `echo`, once with a tool that takes 0.25 s (`sleep`).

It prints figures and checks only that nothing is lost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.config import AgentConfig
from agents.events import Event
from agents.loop import RunDeps, start_run
from agents.mcp import McpHub, child_environment
from agents.mcp_config import McpServerConfig
from agents.model import ModelRequest
from agents.state import TerminationReason
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tools import ToolRegistry
from agents.tree import DefaultDecisionTree

ROOT = Path(__file__).resolve().parents[1]
TESTING_SERVER = ["-m", "tests.mcp.testing_server"]
SLOW_SECONDS = 0.25


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def http_server() -> Iterator[str]:
    """The testing server over Streamable HTTP on a loopback port; yields its address."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *TESTING_SERVER, "--http", str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the testing server did not start over HTTP") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait()


def configs(url: str) -> dict[str, McpServerConfig]:
    return {
        "stdio": McpServerConfig(
            name="bench",
            transport="stdio",
            command=sys.executable,
            args=tuple(TESTING_SERVER),
            env={"PYTHONPATH": str(ROOT)},
        ),
        "http": McpServerConfig(name="bench", transport="http", url=url),
    }


async def bare_client(config: McpServerConfig, stack: AsyncExitStack) -> Any:
    """The SDK's client, connected as `McpServer` connects it, with nothing of Oracle's."""
    import httpx2
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if config.transport == "stdio":
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=child_environment(config)
        )
        client = Client(stdio_client(params, errlog=sys.stderr))
    else:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=300.0))
        )
        client = Client(streamable_http_client(config.url, http_client=http))
    return await stack.enter_async_context(client)


async def per_call(calls: int, call: Callable[[int], Any]) -> tuple[float, float]:
    """Milliseconds per call of `calls` calls made one after the other: wall time, and
    CPU time of this process (the client's work, not the server's)."""
    started, cpu = time.perf_counter(), time.process_time()
    for index in range(calls):
        await call(index)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return wall * 1000 / calls, cpu * 1000 / calls


async def cost_per_call(config: McpServerConfig, calls: int, passes: int) -> dict[str, float]:
    async with AsyncExitStack() as stack:
        client = await bare_client(config, stack)
        hub = McpHub([config])
        stack.push_async_callback(hub.close)
        await hub.start()
        tools = ToolRegistry([hub.tool(offered) for offered in hub.tools()])

        async def bare(index: int) -> None:
            result = await client.call_tool("echo", {"text": f"call {index}"})
            assert result.content[0].text == f"call {index}"

        async def oracle(index: int) -> None:
            arguments = json.dumps({"text": f"call {index}"})
            result = await tools.run(str(index), "bench__echo", arguments)
            assert result.ok and result.content == f"call {index}", result

        await per_call(20, bare)  # warm up both paths
        await per_call(20, oracle)
        samples: dict[str, list[tuple[float, float]]] = {"bare": [], "oracle": []}
        for _ in range(passes):
            samples["bare"].append(await per_call(calls, bare))
            samples["oracle"].append(await per_call(calls, oracle))
    return {
        f"{path}_{kind}": statistics.median(sample[i] for sample in samples[path])
        for path in samples
        for i, kind in enumerate(("wall", "cpu"))
    }


async def runs_at_once(
    config: McpServerConfig, runs: int, steps: int, tool: str
) -> dict[str, float | int]:
    hub = McpHub([config])
    await hub.start()
    tools = ToolRegistry([hub.tool(offered) for offered in hub.tools()])
    server = hub.servers["bench"]
    calls_before = server.calls
    tree = DefaultDecisionTree(AgentConfig(max_parallel_tools=1))

    def arguments(run: int, step: int) -> dict[str, Any]:
        if tool == "sleep":
            return {"seconds": SLOW_SECONDS + step / 1000}  # new arguments: progress
        return {"text": f"run {run} step {step}"}

    def expected(run: int, step: int) -> str:
        if tool == "sleep":
            return f"slept {SLOW_SECONDS + step / 1000} s"
        return f"run {run} step {step}"

    async def one_run(run: int) -> tuple[bool, int]:
        def script(index: int, request: ModelRequest) -> Reply:
            if index < steps:
                return Reply(calls=[Call(f"bench__{tool}", arguments(run, index))])
            return Reply(text="Done.")

        results: list[str] = []

        async def on_event(event: Event) -> None:
            if event["type"] == "tool.result" and event["ok"]:
                results.append(event["content"])

        deps = RunDeps(model=ScriptedModel(script, record=False), tree=tree, tools=tools)
        outcome = await start_run(f"Run {run}", deps, on_event=on_event)
        kept = sum(1 for step in range(steps) if expected(run, step) in results[step : step + 1])
        return outcome.reason is TerminationReason.COMPLETED, kept

    try:
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(one_run(run) for run in range(runs)))
        wall = time.perf_counter() - started
    finally:
        await hub.close()
    kept = sum(k for _, k in outcomes)
    return {
        "completed": sum(1 for done, _ in outcomes if done),
        "calls": server.calls - calls_before,
        "expected": runs * steps,
        "lost": runs * steps - kept,
        "wall_s": wall,
    }


async def main(options: argparse.Namespace) -> None:
    with http_server() as url:
        servers = configs(url)
        print(f"## Cost per call: {options.calls} calls of `echo`, median of {options.passes}")
        print("| transport | figure | SDK alone, ms | through Oracle, ms | Oracle adds, ms |")
        print("|---|---|---|---|---|")
        for transport, config in servers.items():
            cost = await cost_per_call(config, options.calls, options.passes)
            for kind, label in (("wall", "wall time"), ("cpu", "client CPU")):
                bare, oracle = cost[f"bare_{kind}"], cost[f"oracle_{kind}"]
                print(
                    f"| {transport} | {label} | {bare:.3f} | {oracle:.3f} | {oracle - bare:+.3f} |"
                )
        print()
        print(f"## {options.runs} runs at once on one event loop, {options.steps} calls each")
        print("| transport | tool | runs completed | calls made / expected | lost | wall, s |")
        print("|---|---|---|---|---|---|")
        lost = 0
        for transport, config in servers.items():
            for tool in ("echo", "sleep"):
                row = await runs_at_once(config, options.runs, options.steps, tool)
                lost += int(row["lost"])
                shown = f"sleep {SLOW_SECONDS} s" if tool == "sleep" else tool
                print(
                    f"| {transport} | {shown} | {row['completed']}/{options.runs} | "
                    f"{row['calls']}/{row['expected']} | {row['lost']} | {row['wall_s']:.2f} |"
                )
    if lost:
        raise SystemExit(f"{lost} tool results were lost")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per pass (cost per call)")
    parser.add_argument("--passes", type=int, default=5, help="passes of each path")
    parser.add_argument("--runs", type=int, default=50, help="runs at once")
    parser.add_argument("--steps", type=int, default=4, help="tool calls per run")
    asyncio.run(main(parser.parse_args()))
