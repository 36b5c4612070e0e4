"""Oracle's side of bench/compare.py: the task run by Oracle's engine.

Run by compare.py in the project's venv (`.venv`); prints a JSON list of rows.
Rounds: `inproc` (Oracle's ScriptedModel), `http` (LiteLLMModel against the
fake server at --base-url) and `floor` (a bare httpx loop against the same
server: the least any framework can take per step over HTTP).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import task

from agents.config import AgentConfig, OperatorLimits
from agents.loop import RunDeps, start_run
from agents.model import Message, Model, ModelRequest, StreamPart
from agents.state import TerminationReason
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tools import Tool, ToolRegistry
from agents.tree import DefaultDecisionTree

# The model a user would choose for an OpenAI-compatible server of their own. With an
# api_base, LiteLLMModel sends it through LiteLLM's `hosted_vllm/` route (its own httpx
# handler) rather than `openai/` (the openai SDK, whose request transform walks every
# message of every call): agents/litellm_model.py, `_route`.
ORACLE_MODEL = "openai/fake-model"


class TimedModel:
    """Wraps a model and adds the time spent inside its stream to the meter."""

    def __init__(self, inner: Model, meter: task.Meter) -> None:
        self.inner = inner
        self.meter = meter

    @property
    def name(self) -> str:
        return self.inner.name

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return self.inner.count_tokens(messages)

    def price(self, prompt_tokens: int, completion_tokens: int) -> float:
        return self.inner.price(prompt_tokens, completion_tokens)

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        self.meter.model_calls += 1
        parts = self.inner.stream(request)
        try:
            while True:
                started = time.perf_counter()
                try:
                    part = await parts.__anext__()
                except StopAsyncIteration:
                    break
                finally:
                    self.meter.model_seconds += time.perf_counter() - started
                yield part
        finally:
            await parts.aclose()


def scripted_model(n: int) -> ScriptedModel:
    """Oracle's own scripted model playing the task."""
    usage = (task.USAGE["prompt_tokens"], task.USAGE["completion_tokens"])

    def script(index: int, request: ModelRequest) -> Reply:
        if index < n:
            return Reply(calls=[Call(task.TOOL_NAME, task.step_arguments(index))], usage=usage)
        return Reply(text=task.FINAL_ANSWER, usage=usage)

    return ScriptedModel(script, record=False)


def deps_for(model: Model, meter: task.Meter, n: int) -> RunDeps:
    """Engine deps whose limits let exactly this run through.

    The user-facing bounds (50 iterations, 100 tool calls) are bypassed with
    `dataclasses.replace`, for the benchmark only; `limit_action` stays `stop`,
    so a limit that still trips ends the run and fails the check.
    """

    def noop(step: int) -> str:
        """Do nothing.

        Args:
            step: The step number.
        """
        return meter.tool(step)

    config = replace(
        AgentConfig(),
        unlimited_iterations=True,
        max_tool_calls_per_turn=n + 10,
        token_budget=10_000_000,
        timeout_seconds=3_600,
    )
    operator = OperatorLimits(
        max_iterations=n + 10, max_tool_calls=n + 10, token_budget=100_000_000
    )
    return RunDeps(
        model=model,
        tree=DefaultDecisionTree(config, operator),
        tools=ToolRegistry([Tool.from_function(noop, name=task.TOOL_NAME, inline=True)]),
    )


async def one_run(
    n: int, round_name: str, base_url: str | None, model_name: str = ORACLE_MODEL
) -> task.Sample:
    meter = task.Meter()
    if round_name == "inproc":
        inner: Model = scripted_model(n)
    else:
        from agents.litellm_model import LiteLLMModel

        assert base_url is not None
        task.load_script(base_url, n)
        inner = LiteLLMModel(model_name, api_base=base_url, api_key="bench")
    model = TimedModel(inner, meter)
    deps = deps_for(model, meter, n)
    clock = task.Stopwatch()
    result = await start_run(task.QUESTION, deps, system_prompt=task.SYSTEM_PROMPT)
    wall, cpu = clock.stop()
    if result.reason is not TerminationReason.COMPLETED:
        raise AssertionError(f"oracle: ended with {result.reason}: {result.final_text}")
    task.check_run("oracle", n, meter, result.final_text, model_calls=n + 1)
    inside = meter.tool_seconds + (meter.model_seconds if round_name == "inproc" else 0.0)
    return task.Sample(wall=wall, inside=inside, cpu=cpu)


FLOOR_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": task.TOOL_NAME,
            "description": "Do nothing.",
            "parameters": {"type": "object", "properties": {"step": {"type": "integer"}}},
        },
    }
]


def run_calls(
    messages: list[dict[str, Any]], wire: list[dict[str, Any]], meter: task.Meter
) -> None:
    """The bare loops' step: the assistant's tool calls, then each no-op tool's result."""
    messages.append({"role": "assistant", "content": None, "tool_calls": wire})
    for call in wire:
        step = json.loads(call["function"]["arguments"])["step"]
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": meter.tool(step)})


async def floor_run(n: int, base_url: str) -> task.Sample:
    """The task as a bare loop: httpx streaming, SSE lines parsed with json, no framework."""
    import httpx

    task.load_script(base_url, n)
    meter = task.Meter()
    tools = FLOOR_TOOLS
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": task.SYSTEM_PROMPT},
        {"role": "user", "content": task.QUESTION},
    ]
    answer = ""
    clock = task.Stopwatch()
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        while True:
            body = {"model": "fake-model", "messages": messages, "tools": tools, "stream": True}
            text, calls = "", {}
            async with client.stream("POST", "/chat/completions", json=body) as response:
                async for line in response.aiter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    chunk = json.loads(line[6:])
                    for choice in chunk.get("choices", ()):
                        delta = choice.get("delta") or {}
                        text += delta.get("content") or ""
                        for call in delta.get("tool_calls") or ():
                            calls[call["index"]] = call
            meter.model_calls += 1
            if not calls:
                answer = text
                break
            wire = [
                {"id": c["id"], "type": "function", "function": c["function"]}
                for c in calls.values()
            ]
            run_calls(messages, wire, meter)
    wall, cpu = clock.stop()
    task.check_run("floor", n, meter, answer, model_calls=n + 1)
    return task.Sample(wall=wall, inside=meter.tool_seconds, cpu=cpu)


async def litellm_run(n: int, base_url: str, model_name: str = ORACLE_MODEL) -> task.Sample:
    """The task as a bare loop over litellm.acompletion (streaming): LiteLLM's own cost."""
    import litellm

    task.load_script(base_url, n)
    meter = task.Meter()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": task.SYSTEM_PROMPT},
        {"role": "user", "content": task.QUESTION},
    ]
    answer = ""
    clock = task.Stopwatch()
    while True:
        response = await litellm.acompletion(
            model=model_name,
            api_base=base_url,
            api_key="bench",
            messages=messages,
            tools=FLOOR_TOOLS,
            stream=True,
            stream_options={"include_usage": True},
            num_retries=0,
            max_retries=0,
        )
        text, calls = "", {}
        async for chunk in response:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for call in delta.tool_calls or ():
                calls[call.index] = {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
        meter.model_calls += 1
        if not calls:
            answer = text
            break
        run_calls(messages, list(calls.values()), meter)
    wall, cpu = clock.stop()
    task.check_run("litellm", n, meter, answer, model_calls=n + 1)
    return task.Sample(wall=wall, inside=meter.tool_seconds, cpu=cpu)


async def rows(
    round_name: str, sizes: list[int], runs: int, base_url: str | None, model_name: str
) -> list[Any]:
    from importlib.metadata import version as package_version

    out = []
    for n in sizes:
        if round_name == "floor":
            assert base_url is not None
            await floor_run(n, base_url)  # warm up
            samples = [await floor_run(n, base_url) for _ in range(runs)]
            name, version = "bare httpx loop (floor)", package_version("httpx")
            note = "reference, no agent framework, streaming"
        elif round_name == "litellm":
            assert base_url is not None
            await litellm_run(n, base_url, model_name)
            samples = [await litellm_run(n, base_url, model_name) for _ in range(runs)]
            name, version = "bare litellm loop", package_version("litellm")
            note = f"reference, no agent framework, streaming, {model_name}"
        else:
            await one_run(n, round_name, base_url, model_name)  # warm up
            samples = [await one_run(n, round_name, base_url, model_name) for _ in range(runs)]
            name, version, note = "oracle", package_version("oracle"), ""
            if round_name == "http":
                version += f" + litellm {package_version('litellm')}"
                note = f"streaming, LiteLLM model {model_name}"
                route = model_name.split("/", 1)[0]
                if route != "openai":
                    name = f"oracle via {route}/"
        row = task.summarise(
            name, version, round_name, n, samples, with_overhead=round_name == "inproc", note=note
        )
        row.round = "inproc" if round_name == "inproc" else "http"
        out.append(row.to_dict())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--round", choices=("inproc", "http", "floor", "litellm"), required=True)
    parser.add_argument("--n", type=int, nargs="+", required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--base-url")
    parser.add_argument("--model", default=ORACLE_MODEL, help="LiteLLM model string over HTTP")
    args = parser.parse_args()
    result = asyncio.run(rows(args.round, args.n, args.runs, args.base_url, args.model))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
