"""Runs through LiteLLM against the local fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from agents.builtin_tools import builtin_tools
from agents.cancel import CancelToken
from agents.clock import Clock
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, start_run
from agents.model import FinishPart, ModelRequest, TextDelta, ToolCallPart, UsagePart
from agents.testing.fake_server import FakeServer
from agents.tree import DefaultDecisionTree

# LiteLLM parses an OpenAI-compatible server's events itself (Oracle's route for a server
# of the operator's own, `openai/` with an api_base) or hands the stream of a provider's
# SDK to its stream wrapper (`custom_openai/` here stands for those). The stream must mean
# the same to a run whichever way it came.
EITHER_STREAM = pytest.mark.parametrize(
    "model", ["openai/fake-model", "custom_openai/fake-model"], ids=["own-server", "sdk-stream"]
)


@pytest.fixture
def server():
    with FakeServer() as fake:
        yield fake


async def ask(server, *, model="openai/fake-model", cancel=None, clock=None, events=None, **config):
    from agents.litellm_model import LiteLLMModel

    deps = RunDeps(
        model=LiteLLMModel(model, api_base=server.base_url, api_key="test-key"),
        tree=DefaultDecisionTree(AgentConfig.from_raw(config)),
        tools=builtin_tools(),
        clock=clock or Clock(),
        retry_base_delay=0.01,
    )
    events = events or EventCollector()
    result = await start_run("What is 17*23?", deps, on_event=events, cancel=cancel)
    return result, events


async def test_a_tool_using_run_completes_with_the_providers_usage_and_price(server):
    server.set_script(
        [
            {
                "tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23"}}],
                "usage": {"prompt_tokens": 50_000, "completion_tokens": 10},
            },
            {
                "text": ["17*23 ", "is 391."],
                "usage": {"prompt_tokens": 50_000, "completion_tokens": 20},
            },
        ]
    )

    result, events = await ask(server, model="openai/gpt-4o-mini", token_budget=200_000)

    assert result.reason.value == "completed"
    assert result.final_text == "17*23 is 391."
    (tool_result,) = events.of_type("tool.result")
    assert tool_result["content"] == "391"
    finished = events.of_type("run.finished")[0]
    assert finished["tokens"] == 100_030
    # gpt-4o-mini in LiteLLM's bundled map: $0.15 / 1M prompt, $0.60 / 1M completion tokens.
    assert finished["cost_usd"] == pytest.approx(0.015 + 30 * 0.6e-6)
    # The provider got the tools and, the second time, the tool result.
    assert server.requests[0]["tools"][0]["function"]["name"] == "calculator"
    assert server.requests[1]["messages"][-1]["content"] == "391"


@EITHER_STREAM
async def test_a_stream_gives_its_text_tool_calls_usage_and_finish_in_order(server, model):
    from agents.litellm_model import LiteLLMModel

    server.set_script(
        [
            {
                "text": ["Let me ", "look."],
                "tool_calls": [
                    {"id": "call_a", "name": "calculator", "arguments": {"expression": "1+1"}},
                    {"id": "call_b", "name": "current_time", "arguments": {}},
                ],
                "usage": {"prompt_tokens": 123, "completion_tokens": 45},
            }
        ]
    )
    llm = LiteLLMModel(model, api_base=server.base_url, api_key="test-key")
    request = ModelRequest(messages=[{"role": "user", "content": "Hi"}], tools=None)

    parts = [part async for part in llm.stream(request)]

    assert parts == [
        TextDelta("Let me "),
        TextDelta("look."),
        UsagePart(123, 45),
        ToolCallPart("call_a", "calculator", '{"expression": "1+1"}'),
        ToolCallPart("call_b", "current_time", "{}"),
        FinishPart("tool_calls"),
    ]


async def test_a_429_is_retried_after_its_retry_after(server):
    server.set_script(
        [{"status": 429, "headers": {"Retry-After": "0.3"}}, {"text": "Answer after a wait."}]
    )
    started = time.monotonic()

    result, _ = await ask(server)

    assert result.reason.value == "completed"
    assert len(server.requests) == 2
    assert time.monotonic() - started >= 0.3


@EITHER_STREAM
async def test_a_stream_broken_before_any_content_is_retried(server, model):
    server.set_script([{"text": "lost", "break_after": 1}, {"text": "Second try."}])

    result, _ = await ask(server, model=model)

    assert result.final_text == "Second try."
    assert len(server.requests) == 2


async def test_lasting_server_errors_end_the_run_as_a_transient_provider_error(server):
    server.set_script([{"status": 500}], repeat_last=True)

    result, events = await ask(server)

    assert result.reason.value == "provider_error"
    assert result.state.failure_class.value == "transient_infra"
    assert len(server.requests) == 4  # the first try and three retries
    notice = events.of_type("system.notice")[-1]
    assert notice["severity"] == "error"
    assert "failed (500) on 4 of 4 attempts" in notice["text"]
    assert (notice["metric"], notice["value"], notice["limit"]) == ("attempts", 4, 4)


@pytest.mark.parametrize(
    "response",
    [
        {"status": 400, "body": {"error": {"message": "bad model"}}},
        # An error event in a stream (the openai SDK drops its code: through it, retried).
        {"text": "lost", "error_after": 1, "error": {"message": "bad schema", "code": 400}},
    ],
    ids=["status", "error-event"],
)
async def test_a_bad_request_is_not_retried(server, response):
    server.set_script([response])

    result, _ = await ask(server)

    assert result.reason.value == "provider_error"
    assert result.state.failure_class.value == "deterministic"
    assert len(server.requests) == 1


@EITHER_STREAM
async def test_a_stream_broken_after_content_keeps_the_text(server, model):
    server.set_script([{"text": ["Partial ", "answer", " lost"], "break_after": 3}])

    result, _ = await ask(server, model=model)

    assert result.reason.value == "provider_error"
    assert "Partial answer" in result.final_text
    assert len(server.requests) == 1


@EITHER_STREAM
async def test_an_error_event_in_the_stream_is_retried_when_it_is_the_servers(server, model):
    server.set_script([{"text": "lost", "error_after": 1}, {"text": "Second try."}])

    result, _ = await ask(server, model=model)

    assert result.reason.value == "completed"
    assert result.final_text == "Second try."
    assert len(server.requests) == 2


class FlowingCollector(EventCollector):
    """Events, and `flowing` set once a second piece of text has streamed."""

    def __init__(self) -> None:
        super().__init__()
        self.flowing = asyncio.Event()

    async def __call__(self, event: dict) -> None:
        await super().__call__(event)
        if len(self.of_type("assistant.delta")) >= 2:
            self.flowing.set()


@EITHER_STREAM
async def test_a_cancel_during_a_slow_stream_stops_in_under_a_second_and_hangs_up(server, model):
    server.set_script([{"text": ["Thinking hard"], "hang": True, "chunk_delay": 0.1}])
    cancel = CancelToken()
    events = FlowingCollector()
    stopped_at = 0.0

    async def cancel_when_streaming() -> None:
        nonlocal stopped_at
        await events.flowing.wait()  # however long the client took to start the stream
        stopped_at = time.monotonic()
        cancel.cancel()

    canceller = asyncio.create_task(asyncio.wait_for(cancel_when_streaming(), 10))
    result, events = await ask(server, model=model, cancel=cancel, events=events)
    ended_at = time.monotonic()
    await canceller

    assert ended_at - stopped_at < 1.0
    assert result.reason.value == "cancelled"
    assert result.final_text.startswith("Stopped: the run was cancelled.")
    assert "Thinking hard" in result.final_text
    assert len(events.of_type("assistant.delta")) >= 2
    assert await asyncio.to_thread(server.wait_for_disconnect, 2.0)


async def test_the_time_limit_stops_a_slow_stream_and_hangs_up(server):
    server.set_script([{"text": ["Still going"], "hang": True, "chunk_delay": 0.05}])
    started = time.monotonic()

    result, _ = await ask(server, clock=Clock(rate=20), timeout_seconds=10)  # 0.5 s real

    assert time.monotonic() - started < 1.5
    assert result.reason.value == "timeout"
    assert "Still going" in result.final_text
    assert await asyncio.to_thread(server.wait_for_disconnect, 2.0)


def test_an_openai_compatible_server_of_ones_own_takes_litellms_own_http_route():
    from agents.litellm_model import LiteLLMModel

    own = LiteLLMModel("openai/llama3", api_base="http://127.0.0.1:11434/v1")
    openai = LiteLLMModel("openai/gpt-4o-mini")
    other = LiteLLMModel("anthropic/claude-sonnet-4-5", api_base="http://proxy.local")

    assert own.route == "hosted_vllm/llama3"
    assert own.name == "openai/llama3"  # what the user chose, and what prices it
    assert openai.route == "openai/gpt-4o-mini"
    assert other.route == "anthropic/claude-sonnet-4-5"


class RawProvider:
    """An OpenAI-compatible server that writes its event stream in the pieces it is
    given: an event cut in the middle of its JSON, several events in one write, CRLF
    line ends and a comment, as proxies and busy servers send them."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")))  # fmt: skip
        await reader.readexactly(length)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        for piece in self.pieces:
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            await asyncio.sleep(0.01)  # each piece its own network read
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()


def _event(delta: dict, finish: str | None = None, usage: dict | None = None) -> bytes:
    chunk = {
        "id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }  # fmt: skip
    if usage is not None:
        chunk["usage"] = usage
    return b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"


@EITHER_STREAM
@pytest.mark.parametrize("pause", [None, 0.035], ids=["read-as-they-come", "read-in-pauses"])
async def test_events_cut_anywhere_by_the_network_stream_the_same(model, pause):
    """Also when the stream is left unread between reads (`read_pause`, as the run host
    asks with many runs streaming): the pieces then come several to a read."""
    from agents.litellm_model import LiteLLMModel

    call = {"index": 0, "id": "call_x", "type": "function"}
    events = b"".join(
        [
            b": a comment the server sends to keep the line open\r\n\r\n",
            _event({"role": "assistant", "content": "Hel"}),
            _event({"content": "lo, "}),
            _event({"content": "wörld"}),
            _event({"tool_calls": [{**call, "function": {"name": "calc", "arguments": ""}}]}),
            _event({"tool_calls": [{"index": 0, "function": {"arguments": '{"x": '}}]}),
            _event({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
            _event({}, finish="tool_calls"),
            b'data: {"id": "c1", "choices": [], "usage": {"prompt_tokens": 9, '
            b'"completion_tokens": 4, "total_tokens": 13}}\r\n\r\n',
            b"data: [DONE]\r\n\r\n",
        ]
    )
    # Cut at every 37th byte (inside JSON, inside "ö", between \r and \n), after the
    # first three events sent together in one write.
    first = events.index(b"lo, ") + 200
    pieces = [events[:first]] + [events[i : i + 37] for i in range(first, len(events), 37)]
    async with RawProvider(pieces) as base_url:
        llm = LiteLLMModel(
            model, api_base=base_url, api_key="test-key",
            read_pause=None if pause is None else lambda: pause,
        )  # fmt: skip
        request = ModelRequest(messages=[{"role": "user", "content": "Hi"}], tools=None)
        parts = [part async for part in llm.stream(request)]

    text = "".join(part.text for part in parts if isinstance(part, TextDelta))
    assert text == "Hello, wörld"
    assert [p for p in parts if not isinstance(p, TextDelta)] == [
        UsagePart(9, 4),
        ToolCallPart("call_x", "calc", '{"x": 1}'),
        FinishPart("tool_calls"),
    ]


WARM_THEN_CALL = """
import asyncio, json, sys
from agents.litellm_model import LiteLLMModel
from agents.model import ModelRequest

async def main():
    model = LiteLLMModel("openai/fake-model", api_base=sys.argv[1], api_key="test-key")
    await model.warm_up()
    warmed = set(sys.modules)
    async for _ in model.stream(ModelRequest([{"role": "user", "content": "hi"}], None)):
        pass
    print(json.dumps(sorted(set(sys.modules) - warmed)))

asyncio.run(main())
"""


def test_warming_up_asks_no_provider_and_leaves_the_first_call_nothing_to_load(server):
    """A worker warms its model up as it starts (runs.host): the first user's first
    word then waits for no import. The warm-up itself never reaches the provider."""
    import subprocess
    import sys
    from pathlib import Path

    server.set_script([{"text": ["Hello."]}])
    done = subprocess.run(
        [sys.executable, "-c", WARM_THEN_CALL, server.base_url],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2],
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-2000:]
    loaded_by_the_call = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded_by_the_call == []
    assert len(server.requests) == 1  # the call's; the warm-up asked nothing
