"""The fake provider's responses: one `tool_rounds` response drives a run through its
tool steps, and a request without a stream gets one whole completion."""

from __future__ import annotations

import json
import socket
import struct
import time

from agents.testing.fake_responses import completion, for_request
from agents.testing.fake_server import FakeServer

ROUNDS = {
    "tool_rounds": 2,
    "tool_calls": [{"name": "search", "arguments": {"q": "owls page {round}", "n": 3}}],
    "text": "Done.",
    "usage": {"prompt_tokens": 5, "completion_tokens": 2},
}


def request(*roles: str) -> dict[str, object]:
    return {"messages": [{"role": role, "content": "x"} for role in roles]}


def test_a_tool_rounds_response_calls_tools_until_the_round_count_then_answers():
    first = for_request(ROUNDS, request("system", "user"))
    second = for_request(ROUNDS, request("user", "assistant", "tool"))
    last = for_request(ROUNDS, request("user", "assistant", "tool", "assistant", "tool"))

    assert first == {
        "tool_calls": [{"name": "search", "arguments": {"q": "owls page 0", "n": 3}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    }
    assert second["tool_calls"][0]["arguments"]["q"] == "owls page 1"
    assert last == {"text": "Done.", "usage": {"prompt_tokens": 5, "completion_tokens": 2}}


def test_tool_results_before_the_last_user_message_do_not_count():
    again = for_request(ROUNDS, request("user", "assistant", "tool", "assistant", "tool", "user"))

    assert again["tool_calls"][0]["arguments"]["q"] == "owls page 0"


def test_a_response_without_tool_rounds_is_played_as_written():
    assert for_request({"text": "hi"}, request("user")) == {"text": "hi"}


def test_a_whole_completion_joins_the_text_and_counts_usage_when_none_is_scripted():
    body = completion(request("user"), {"text": ["Hel", "lo"]})

    assert body["choices"] == [
        {"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}
    ]
    assert body["usage"] == {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}


def test_a_whole_completion_carries_its_tool_calls():
    body = completion(request("user"), {"tool_calls": [{"name": "clock", "id": "c1"}]})

    (choice,) = body["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "clock", "arguments": "{}"}}
    ]


def test_a_client_that_resets_a_hanging_stream_counts_as_gone():
    """A process that exits with unread bytes resets its socket instead of closing
    it; the fake provider still notes that the client hung up."""
    with FakeServer([{"text": ["Working "], "hang": True, "chunk_delay": 0.05}]) as server:
        client = socket.create_connection(("127.0.0.1", server.port))
        body = json.dumps({"model": "fake-model", "stream": True, "messages": []}).encode()
        client.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        client.recv(64)  # the stream has started; what follows stays unread
        time.sleep(0.3)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()

        assert server.wait_for_disconnect(5)
