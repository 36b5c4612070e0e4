"""One call's bound: arguments over the operator's size limit are refused before the call
runs (not parsed, the tool never called), the model told why, the refusal counted; the
provider's stream is not read past it."""

from __future__ import annotations

import json

from agents.config import TOOL_ARGUMENTS_MAX_BYTES, AgentConfig
from agents.events import EventCollector
from agents.litellm_stream import Chunk, parts
from agents.model import FinishPart, TextDelta, ToolCallPart
from agents.testing.scripted import Call, Reply
from agents.tools import Tool, ToolRegistry
from tests.agents.conftest import run_script

WRITTEN: list[str] = []


def write_note(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    WRITTEN.append(text)
    return f"Wrote {len(text)} characters."


def notes(max_argument_bytes: int = TOOL_ARGUMENTS_MAX_BYTES) -> ToolRegistry:
    return ToolRegistry(
        [Tool.from_function(write_note, inline=True)], max_argument_bytes=max_argument_bytes
    )


async def test_a_call_with_100000_characters_of_arguments_is_refused_before_it_runs() -> None:
    WRITTEN.clear()
    arguments = json.dumps({"text": "x" * 100_000})
    script = [
        Reply(calls=[Call("write_note", arguments)]),
        Reply("The note was too long to send in one call; here is a summary instead."),
    ]

    outcome = await run_script(script, tools=notes())

    assert WRITTEN == []  # the tool never ran
    (result,) = outcome.events.of_type("tool.result")
    assert result["ok"] is False
    assert "over the limit of 65,536 bytes" in result["content"]
    assert f"({len(arguments):,} bytes came)" in result["content"]
    assert "split the work into several smaller calls" in result["content"]
    # Counted for the limit log, with its figures.
    (refused,) = outcome.events.of_type("tool.refused")
    assert refused["reason"] == "arguments_too_large"
    assert (refused["metric"], refused["value"], refused["limit"]) == (
        "argument_bytes", len(arguments), 65_536,
    )  # fmt: skip
    assert refused["name"] == "write_note" and refused["id"] == result["id"]
    # The model read why, and the run answered.
    last_request = outcome.model.calls[-1].messages
    assert "over the limit of 65,536 bytes" in last_request[-1]["content"]
    assert outcome.reason == "completed"
    assert outcome.result.final_text.startswith("The note was too long")


async def test_the_operators_limit_is_counted_in_bytes_and_a_call_within_it_runs() -> None:
    WRITTEN.clear()
    small = json.dumps({"text": "é" * 400}, ensure_ascii=False)
    large = json.dumps({"text": "é" * 600}, ensure_ascii=False)
    script = [
        Reply(calls=[Call("write_note", small), Call("write_note", large)]),
        Reply("Done."),
    ]

    outcome = await run_script(script, tools=notes(max_argument_bytes=1_024))

    # 600 characters of "é" are 1,200 bytes in UTF-8: over 1,024, though fewer characters.
    assert WRITTEN == ["é" * 400]
    first, second = outcome.events.of_type("tool.result")
    assert first["ok"] and first["content"] == "Wrote 400 characters."
    assert not second["ok"] and "over the limit of 1,024 bytes" in second["content"]
    assert [e["value"] for e in outcome.events.of_type("tool.refused")] == [len(large.encode())]
    assert outcome.reason == "completed"


async def test_a_stream_is_not_read_past_a_tool_calls_limit() -> None:
    read = 0
    piece = "y" * 1_000

    async def provider():
        nonlocal read
        chunks: list[Chunk] = [("Writing it down.", [(0, "call_w", "write_note", '{"text": "')],
                                None, None)]  # fmt: skip
        chunks += [("", [(0, "", "", piece)], None, None)] * 500  # half a megabyte in all
        chunks += [("", [(0, "", "", '"}')], "tool_calls", None), ("", [], None, (10, 125_000))]
        for chunk in chunks:
            read += 1
            yield chunk

    got = [part async for part in parts(provider(), max_argument_bytes=65_536)]

    # Reading stopped at the chunk that passed 64 KiB: the 66th piece, not the 500th.
    assert read == 1 + 66
    text, call, finish = got
    assert text == TextDelta("Writing it down.")
    assert isinstance(call, ToolCallPart) and (call.id, call.name) == ("call_w", "write_note")
    assert 65_536 < len(call.arguments) <= 65_536 + len(piece)
    assert finish == FinishPart("tool_calls")
    # The registry refuses what came, unparsed (it is no JSON: it was cut).
    result = await notes().run(call.id, call.name, call.arguments)
    assert not result.ok and "over the limit of 65,536 bytes" in result.content
    assert result.refusal is not None and result.refusal.value == len(call.arguments)


async def test_a_provider_streaming_runaway_arguments_is_hung_up_on_and_the_run_answers() -> None:
    from agents.litellm_model import LiteLLMModel
    from agents.loop import RunDeps, start_run
    from agents.testing.fake_server import FakeServer
    from agents.tree import DefaultDecisionTree

    WRITTEN.clear()
    runaway = {"text": "z" * 500_000}  # half a megabyte, 2,000 characters a chunk
    script = [
        {"text": "Writing it down.", "tool_calls": [{"name": "write_note", "arguments": runaway}],
         "argument_pieces": 2_000, "chunk_delay": 0.002},
        {"text": "That was too long for one call; here is a summary instead."},
    ]  # fmt: skip
    with FakeServer(script) as server:
        model = LiteLLMModel("openai/fake-model", api_base=server.base_url, api_key="test-key")
        deps = RunDeps(model=model, tree=DefaultDecisionTree(AgentConfig()), tools=notes())
        events = EventCollector()
        result = await start_run("Note this down.", deps, on_event=events)
        assert server.wait_for_disconnect(5)
        sent, asked = list(server.sent), list(server.requests)

    # 253 chunks carry the call; the stream was left after about 33 of them.
    assert len(sent) == 2 and sent[0] < 60, sent
    assert WRITTEN == []
    (refused,) = events.of_type("tool.result")
    assert not refused["ok"] and "over the limit of 65,536 bytes" in refused["content"]
    assert 65_536 < events.of_type("tool.refused")[0]["value"] < 70_000
    # The model was told, with the text it had streamed kept, and it answered.
    history = asked[1]["messages"]
    assert history[-2]["content"] == "Writing it down."
    assert "over the limit of 65,536 bytes" in history[-1]["content"]
    assert result.reason.value == "completed"
    assert result.final_text.endswith("here is a summary instead.")
