"""An MCP result as the engine's output, and an MCP error in one line, without a server."""

from __future__ import annotations

from types import SimpleNamespace

from agents.mcp_errors import describe_error, innermost
from agents.mcp_results import tool_output


def result(*content: object, is_error: bool = False, structured: object = None) -> object:
    return SimpleNamespace(content=list(content), is_error=is_error, structured_content=structured)


def block(kind: str, **fields: object) -> object:
    return SimpleNamespace(type=kind, **fields)


def test_audio_and_binary_resources_are_named_not_shown():
    output = tool_output(
        result(
            block("audio", mime_type="audio/wav", data="AAAA"),
            block("resource", resource=SimpleNamespace(uri="file:///a.bin", mime_type=None)),
        )
    )

    assert output.text == "[audio (audio/wav), not shown]\n[resource file:///a.bin (binary)]"
    assert (output.ok, output.attachments) == (True, [])


def test_an_image_that_is_not_base64_is_described_not_attached():
    output = tool_output(result(block("image", mime_type="image/png", data="not base64!")))

    assert output.text == "[image (image/png, 8 bytes), too large to show]"
    assert output.attachments == []


def test_structured_content_is_the_text_only_when_there_is_no_other():
    assert tool_output(result(structured={"n": 2})).text == '{"n": 2}'
    assert tool_output(result(block("text", text="two"), structured={"n": 2})).text == "two"


def test_an_error_without_words_still_says_it_failed():
    output = tool_output(result(is_error=True))

    assert (output.ok, output.text) == (False, "the tool reported an error")


def test_an_error_is_described_from_inside_its_exception_groups():
    missing = FileNotFoundError(2, "No such file", "mcp-nothing")
    nested = ExceptionGroup("outer", [ExceptionGroup("inner", [missing])])

    assert innermost(nested) is missing
    assert describe_error(nested) == "the command was not found (mcp-nothing)"
    assert describe_error(RuntimeError("first line\nsecond")) == "first line"
    assert describe_error(TimeoutError()) == "TimeoutError"
