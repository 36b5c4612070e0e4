"""The peers' side of bench/compare.py: the task run by other agent frameworks.

Run by compare.py in `.venv-bench` (openai-agents installs a top-level package
named `agents`, like Oracle's engine, so the two cannot share a process);
prints a JSON list of rows. Each framework gets its own in-process scripted
model (round `inproc`) or talks to the fake server at --base-url through its
own OpenAI client (round `http`), with its quickest tool form (async where it
has one, since a sync tool goes to a thread).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import time
import warnings
from collections.abc import Callable
from importlib.metadata import version as package_version
from typing import Any

import task

FRAMEWORKS = ("openai-agents", "pydantic-ai", "langgraph", "smolagents")
PACKAGES = {
    "openai-agents": "openai-agents",
    "pydantic-ai": "pydantic-ai-slim",
    "langgraph": "langgraph",
    "smolagents": "smolagents",
}
API_KEY = "bench"
MODEL = "fake-model"
# What one run of a framework gives: its meter, its answer, wall and CPU seconds.
Outcome = tuple[task.Meter, str, float, float]


# --- openai-agents -----------------------------------------------------------------


async def openai_agents_run(n: int, base_url: str | None) -> Outcome:
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    meter = task.Meter()

    class ScriptedModel(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            started = time.perf_counter()
            step = meter.model_calls
            meter.model_calls += 1
            output: list[Any]
            if step < n:
                output = [
                    ResponseFunctionToolCall(
                        id=f"fc_{step}",
                        call_id=f"call_{step}",
                        name=task.TOOL_NAME,
                        arguments=json.dumps(task.step_arguments(step)),
                        type="function_call",
                        status="completed",
                    )
                ]
            else:
                text = ResponseOutputText(
                    text=task.FINAL_ANSWER, annotations=[], type="output_text"
                )
                output = [
                    ResponseOutputMessage(
                        id="msg_final",
                        content=[text],
                        role="assistant",
                        status="completed",
                        type="message",
                    )
                ]
            usage = Usage(requests=1, input_tokens=50, output_tokens=10, total_tokens=60)
            response = ModelResponse(output=output, usage=usage, response_id=None)
            meter.model_seconds += time.perf_counter() - started
            return response

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    async def noop(step: int) -> str:
        """Do nothing."""
        return meter.tool(step)

    model: Any = ScriptedModel() if base_url is None else _openai_agents_http_model(base_url)
    agent = Agent(name="bench", instructions=task.SYSTEM_PROMPT, model=model, tools=[noop])
    clock = task.Stopwatch()
    result = await Runner.run(agent, task.QUESTION, max_turns=n + 5)
    wall, cpu = clock.stop()
    return meter, str(result.final_output), wall, cpu


_clients: dict[str, Any] = {}


def _openai_client(base_url: str) -> Any:
    """One AsyncOpenAI client per process, as an application would keep it."""
    from openai import AsyncOpenAI

    if base_url not in _clients:
        _clients[base_url] = AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
    return _clients[base_url]


def _openai_agents_http_model(base_url: str) -> Any:
    from agents import OpenAIChatCompletionsModel

    return OpenAIChatCompletionsModel(model=MODEL, openai_client=_openai_client(base_url))


# --- pydantic-ai -------------------------------------------------------------------


async def pydantic_ai_run(n: int, base_url: str | None) -> Outcome:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import UsageLimits

    meter = task.Meter()

    async def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        started = time.perf_counter()
        step = meter.model_calls
        meter.model_calls += 1
        if step < n:
            part: Any = ToolCallPart(
                tool_name=task.TOOL_NAME,
                args=task.step_arguments(step),
                tool_call_id=f"call_{step}",
            )
        else:
            part = TextPart(task.FINAL_ANSWER)
        response = ModelResponse(parts=[part])
        meter.model_seconds += time.perf_counter() - started
        return response

    if base_url is None:
        model: Any = FunctionModel(script)
    else:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        provider = OpenAIProvider(openai_client=_openai_client(base_url))
        model = OpenAIChatModel(MODEL, provider=provider)
    agent: Any = Agent(model, system_prompt=task.SYSTEM_PROMPT)

    @agent.tool_plain
    async def noop(step: int) -> str:
        """Do nothing."""
        return meter.tool(step)

    clock = task.Stopwatch()
    result = await agent.run(task.QUESTION, usage_limits=UsageLimits(request_limit=None))
    wall, cpu = clock.stop()
    return meter, str(result.output), wall, cpu


# --- LangGraph (prebuilt ReAct agent) ----------------------------------------------


async def langgraph_run(n: int, base_url: str | None) -> Outcome:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    meter = task.Meter()

    class ScriptedChat(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
            raise NotImplementedError("the benchmark runs async")

        async def _agenerate(self, *args: Any, **kwargs: Any) -> ChatResult:
            started = time.perf_counter()
            step = meter.model_calls
            meter.model_calls += 1
            if step < n:
                call = {
                    "name": task.TOOL_NAME,
                    "args": task.step_arguments(step),
                    "id": f"call_{step}",
                    "type": "tool_call",
                }
                message = AIMessage(content="", tool_calls=[call])
            else:
                message = AIMessage(content=task.FINAL_ANSWER)
            result = ChatResult(generations=[ChatGeneration(message=message)])
            meter.model_seconds += time.perf_counter() - started
            return result

    @tool
    async def noop(step: int) -> str:
        """Do nothing."""
        return meter.tool(step)

    if base_url is None:
        model: Any = ScriptedChat()
    else:
        from langchain_openai import ChatOpenAI

        model = ChatOpenAI(model=MODEL, base_url=base_url, api_key=API_KEY, max_retries=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of langchain
        graph = create_react_agent(model, [noop], prompt=task.SYSTEM_PROMPT)
    clock = task.Stopwatch()
    result = await graph.ainvoke(
        {"messages": [("user", task.QUESTION)]}, config={"recursion_limit": 2 * n + 10}
    )
    wall, cpu = clock.stop()
    return meter, str(result["messages"][-1].content), wall, cpu


# --- smolagents --------------------------------------------------------------------


def smolagents_run(n: int, base_url: str | None) -> Outcome:
    from smolagents import Model, OpenAIServerModel, ToolCallingAgent, tool
    from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction
    from smolagents.monitoring import LogLevel, TokenUsage

    meter = task.Meter()

    class ScriptedModel(Model):
        def generate(self, *args: Any, **kwargs: Any) -> ChatMessage:
            started = time.perf_counter()
            step = meter.model_calls
            meter.model_calls += 1
            if step < n:
                name, arguments = task.TOOL_NAME, task.step_arguments(step)
            else:  # smolagents answers through its final_answer tool
                name, arguments = "final_answer", {"answer": task.FINAL_ANSWER}
            function = ChatMessageToolCallFunction(name=name, arguments=arguments)
            message = ChatMessage(
                role="assistant",
                content="",
                tool_calls=[
                    ChatMessageToolCall(id=f"call_{step}", type="function", function=function)
                ],
                token_usage=TokenUsage(input_tokens=50, output_tokens=10),
            )
            meter.model_seconds += time.perf_counter() - started
            return message

    @tool
    def noop(step: int) -> str:
        """Do nothing.

        Args:
            step: The step number.
        """
        return meter.tool(step)

    if base_url is None:
        model: Any = ScriptedModel()
    else:
        model = OpenAIServerModel(model_id=MODEL, api_base=base_url, api_key=API_KEY)
    agent = ToolCallingAgent(
        tools=[noop], model=model, max_steps=n + 5, verbosity_level=LogLevel.OFF
    )
    agent.instructions = task.SYSTEM_PROMPT
    clock = task.Stopwatch()
    answer = agent.run(task.QUESTION)
    wall, cpu = clock.stop()
    return meter, str(answer), wall, cpu


RUNNERS: dict[str, Callable[[int, str | None], Any]] = {
    "openai-agents": openai_agents_run,
    "pydantic-ai": pydantic_ai_run,
    "langgraph": langgraph_run,
    "smolagents": smolagents_run,
}


async def one_run(framework: str, n: int, base_url: str | None) -> task.Sample:
    if base_url is not None:
        final_tool = "final_answer" if framework == "smolagents" else None
        task.load_script(base_url, n, final_tool=final_tool)
    outcome = RUNNERS[framework](n, base_url)
    if asyncio.iscoroutine(outcome):
        outcome = await outcome
    meter, answer, wall, cpu = outcome
    model_calls = n + 1 if base_url is None else None  # over HTTP the server counts them
    task.check_run(framework, n, meter, answer, model_calls=model_calls)
    inside = meter.tool_seconds + (meter.model_seconds if base_url is None else 0.0)
    return task.Sample(wall=wall, inside=inside, cpu=cpu)


async def measure(framework: str, n: int, runs: int, base_url: str | None) -> list[task.Sample]:
    """Warm up, then time `runs` runs, all in one event loop (so clients stay valid)."""
    await one_run(framework, n, base_url)
    return [await one_run(framework, n, base_url) for _ in range(runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=FRAMEWORKS, required=True)
    parser.add_argument("--round", choices=("inproc", "http"), required=True)
    parser.add_argument("--n", type=int, nargs="+", required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--base-url")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    base_url = args.base_url if args.round == "http" else None
    rows = []
    for n in args.n:
        samples = asyncio.run(measure(args.framework, n, args.runs, base_url))
        rows.append(
            task.summarise(
                args.framework,
                package_version(PACKAGES[args.framework]),
                args.round,
                n,
                samples,
                with_overhead=args.round == "inproc",
                note=NOTES[args.framework],
            ).to_dict()
        )
    print(json.dumps(rows))


NOTES = {
    "openai-agents": "Runner.run, chat completions, no streaming",
    "pydantic-ai": "Agent.run, no streaming",
    "langgraph": "create_react_agent, ainvoke, no streaming",
    "smolagents": "ToolCallingAgent.run (sync), answers via final_answer tool",
}


if __name__ == "__main__":
    main()
