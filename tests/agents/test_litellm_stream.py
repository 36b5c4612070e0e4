"""A provider's stream as parts, and a failed call's kind, without a provider."""

from __future__ import annotations

import datetime
from email.utils import format_datetime
from types import SimpleNamespace

import pytest

from agents.litellm_stream import Chunk, parts
from agents.model import FinishPart, ModelError, ModelProblem, TextDelta, ToolCallPart, UsagePart


async def parts_of(chunks: list[Chunk]) -> list[object]:
    async def stream():
        for chunk in chunks:
            yield chunk

    return [part async for part in parts(stream())]


async def test_tool_call_pieces_are_joined_and_come_after_the_text_and_usage():
    chunks: list[Chunk] = [
        ("Let me look", [(0, "call_a", "sea", '{"q"')], None, None),
        (" that up.", [(1, "", "clock", ""), (0, "", "rch", ': "owls"}')], None, None),
        ("", [], "tool_calls", None),
        ("", [], None, (12, 7)),
        ("ignored", [], None, None),  # past the usage: only LiteLLM's own logging
    ]

    assert await parts_of(chunks) == [
        TextDelta("Let me look"),
        TextDelta(" that up."),
        UsagePart(12, 7),
        ToolCallPart("call_a", "search", '{"q": "owls"}'),
        ToolCallPart("call_1", "clock", ""),
        FinishPart("tool_calls"),
    ]


async def test_a_stream_that_ends_without_a_finish_reason_ended_early():
    with pytest.raises(ModelError, match="ended early") as raised:
        await parts_of([("half an answ", [], None, None)])

    assert raised.value.kind is ModelProblem.UNREACHABLE


@pytest.mark.parametrize(
    ("status", "words", "expected"),
    [
        (400, "This model's maximum context length is 8192 tokens", ModelProblem.CONTEXT_TOO_LONG),
        (400, "messages must alternate", ModelProblem.BAD_REQUEST),
        (429, "slow down", ModelProblem.RATE_LIMITED),
        (503, "overloaded", ModelProblem.PROVIDER_FAILED),
        (None, "something else", ModelProblem.FAILED),
    ],
)
def test_an_error_is_classified_by_its_status_and_words(status, words, expected):
    from agents.litellm_errors import problem_of

    error = Exception(words)
    error.status_code = status  # type: ignore[attr-defined]

    assert problem_of(error) == (expected, status)


def test_a_broken_connection_anywhere_in_the_chain_is_unreachable():
    from agents.litellm_errors import problem_of

    try:
        try:
            raise ConnectionResetError("reset by peer")
        except ConnectionResetError as cause:
            raise RuntimeError("status 500") from cause
    except RuntimeError as error:
        assert problem_of(error) == (ModelProblem.UNREACHABLE, None)


def test_retry_after_is_read_in_seconds_or_as_a_date():
    from agents.litellm_errors import retry_after

    def said(value: str) -> Exception:
        error = Exception("rate limited")
        error.response = SimpleNamespace(headers={"retry-after": value})  # type: ignore[attr-defined]
        return error

    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30)

    assert retry_after(said("7")) == 7.0
    assert retry_after(said("-3")) == 0.0
    assert 25 < (retry_after(said(format_datetime(later, usegmt=True))) or 0) <= 30
    assert retry_after(said("soon")) is None
    assert retry_after(Exception("no headers")) is None


def test_a_refusal_for_length_is_one_whatever_broke_before_it():
    # llama-cpp-python's server: the empty stream's read ended in a transport error, and
    # the request asked again brought its refusal; that refusal is what the run learns from.
    import httpx
    from litellm.exceptions import ContextWindowExceededError

    from agents.litellm_errors import problem_of

    refusal = ContextWindowExceededError(
        "This model's maximum context length is 4096 tokens.", "smollm2", "hosted_vllm"
    )
    refusal.__context__ = httpx.RemoteProtocolError("peer closed connection")

    assert problem_of(refusal)[0] is ModelProblem.CONTEXT_TOO_LONG


async def test_a_stream_with_nothing_in_it_says_so():
    from agents.litellm_stream import EmptyStream

    with pytest.raises(EmptyStream):
        await parts_of([])
