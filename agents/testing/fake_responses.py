"""What the fake provider sends for a scripted response: a stream's chunks (slow,
endless, broken or ending in an error event as the response asks), a whole completion,
an error status, each framed as HTTP/1.1 with chunked transfer. The script's keys are
described in `agents.testing.fake_server`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

Response = dict[str, Any]

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests"}


async def stream_response(
    writer: asyncio.StreamWriter,
    client_gone: asyncio.Future[bytes],
    payload: dict[str, Any],
    response: Response,
    sent: list[int] | None = None,
) -> bool:
    """Stream the response; False when the client went away first. With `sent`, how many
    of its chunks went out is added to it at the end."""
    count = [0]
    try:
        return await _stream(writer, client_gone, payload, response, count)
    finally:
        if sent is not None:
            sent.append(count[0])


async def _stream(
    writer: asyncio.StreamWriter,
    client_gone: asyncio.Future[bytes],
    payload: dict[str, Any],
    response: Response,
    count: list[int],
) -> bool:
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode())
    chunks = list(_chunks(payload, response))
    break_after = response.get("break_after")
    error_after = response.get("error_after")
    delay = float(response.get("chunk_delay", 0))
    text_count = len(_text_chunks(response))
    hang_at = 1 + text_count if response.get("hang") else -1
    stamp = bool(response.get("stamp"))
    for number, chunk in enumerate(chunks):
        if break_after is not None and number >= break_after:
            writer.transport.abort()  # a broken stream: no terminating chunk
            return True
        if error_after is not None and number >= error_after:
            error = {"message": "scripted error in the stream", "code": 500}
            await _send_chunk(writer, {"error": {**error, **response.get("error", {})}})
            break
        if number and delay and chunk.get("choices"):
            await sleep_unless(client_gone, delay)
        if client_gone.done():
            return False
        if number == hang_at:
            return await _hang(writer, client_gone, delay or 0.05)
        if stamp and 1 <= number <= text_count:
            chunk = _delta({"content": f"w{number - 1}t{time.time_ns() // 1000} "})
        await _send_chunk(writer, chunk)
        count[0] += 1
    await _send_raw(writer, b"data: [DONE]\n\n")
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True


async def _hang(
    writer: asyncio.StreamWriter, client_gone: asyncio.Future[bytes], delay: float
) -> bool:
    while not client_gone.done():
        await sleep_unless(client_gone, delay)
        if client_gone.done():
            break
        try:
            await _send_chunk(writer, _delta({"content": "."}))
        except ConnectionError:
            break
    return False


def for_request(response: Response, payload: dict[str, Any]) -> Response:
    """A `tool_rounds` response as this request gets it: its tool calls or its text."""
    if "tool_rounds" not in response:
        return response
    messages = payload.get("messages") or []
    roles = [m.get("role") for m in messages]
    last_user = len(roles) - 1 - roles[::-1].index("user") if "user" in roles else -1
    results = roles[last_user + 1 :].count("tool")
    rest = {k: v for k, v in response.items() if k != "tool_rounds"}
    if results < response["tool_rounds"]:
        calls = [
            {**call, "arguments": {
                key: value.replace("{round}", str(results)) if isinstance(value, str) else value
                for key, value in call.get("arguments", {}).items()
            }}
            for call in rest.get("tool_calls", [])
        ]  # fmt: skip
        return {"tool_calls": calls, **({"usage": rest["usage"]} if "usage" in rest else {})}
    return {k: v for k, v in rest.items() if k != "tool_calls"}


async def sleep_unless(client_gone: asyncio.Future[bytes], seconds: float) -> None:
    """Wait `seconds`, or less if the client goes away meanwhile (closing or resetting
    its socket)."""
    with contextlib.suppress(TimeoutError, ConnectionError):
        await asyncio.wait_for(asyncio.shield(client_gone), seconds)


def _delta(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _text_chunks(response: Response) -> list[str]:
    text = response.get("text", [])
    return [text] if isinstance(text, str) else list(text)


def _usage(payload: dict[str, Any], response: Response) -> dict[str, int]:
    if "usage" in response:
        usage = dict(response["usage"])
    else:
        prompt = sum(len(str(m.get("content") or "")) for m in payload.get("messages", []))
        completion = sum(len(chunk) for chunk in _text_chunks(response))
        usage = {"prompt_tokens": prompt // 4 + 1, "completion_tokens": completion // 4 + 1}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _tool_calls(response: Response) -> list[dict[str, Any]]:
    calls = []
    for index, call in enumerate(response.get("tool_calls", [])):
        arguments = call.get("arguments", {})
        calls.append(
            {
                "index": index,
                "id": call.get("id", f"call_{index}_{int(time.time() * 1000) % 100000}"),
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    return calls


def _chunks(payload: dict[str, Any], response: Response) -> list[dict[str, Any]]:
    calls = _tool_calls(response)
    finish = response.get("finish_reason", "tool_calls" if calls else "stop")
    chunks = [_delta({"role": "assistant", "content": ""})]
    chunks += [_delta({"content": text}) for text in _text_chunks(response)]
    pieces = int(response.get("argument_pieces") or 0)
    for call in calls:
        if not pieces:
            chunks.append(_delta({"tool_calls": [call]}))
            continue
        # The call's arguments streamed in pieces of that many characters, as a provider
        # streams them: its id and name with the first piece, then the index alone.
        text = call["function"]["arguments"]
        for start in range(0, max(len(text), 1), pieces):
            piece = {
                "index": call["index"],
                "function": {"arguments": text[start : start + pieces]},
            }
            if not start:
                piece = {**call, "function": {**call["function"], **piece["function"]}}
            chunks.append(_delta({"tool_calls": [piece]}))
    chunks.append(_delta({}, finish))
    if (payload.get("stream_options") or {}).get("include_usage"):
        usage_chunk = _delta({})
        usage_chunk["choices"] = []
        usage_chunk["usage"] = _usage(payload, response)
        chunks.append(usage_chunk)
    return chunks


def completion(payload: dict[str, Any], response: Response) -> dict[str, Any]:
    """The response as one chat completion, for a request that did not ask for a stream."""
    calls = _tool_calls(response)
    for call in calls:
        call.pop("index")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(_text_chunks(response))}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "fake-model",
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": _usage(payload, response),
    }


async def _send_chunk(writer: asyncio.StreamWriter, chunk: dict[str, Any]) -> None:
    await _send_raw(writer, f"data: {json.dumps(chunk)}\n\n".encode())


async def _send_raw(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def send_json(
    writer: asyncio.StreamWriter,
    status: int,
    body: object,
    headers: dict[str, str] | None = None,
) -> None:
    """A JSON answer with `status` (and `headers`); the connection closes after it."""
    data = json.dumps(body).encode()
    reason = _REASONS.get(status, "Error")
    lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    lines += [f"Content-Length: {len(data)}", "Connection: close", "", ""]
    writer.write("\r\n".join(lines).encode() + data)
    await writer.drain()


EMPTY_STREAM = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
    b"Connection: close\r\n\r\n0\r\n\r\n"
)


def request_tokens(payload: dict[str, Any]) -> int:
    """A request's tokens as this server counts them: a token for every four characters
    of its messages' and tools' JSON, and the reply's `max_tokens` when it asks for them."""
    text = json.dumps(payload.get("messages") or []) + json.dumps(payload.get("tools") or [])
    return len(text) // 4 + int(payload.get("max_tokens") or 0)


def too_long(window: int, tokens: int) -> dict[str, Any]:
    """OpenAI's body for a request longer than the model's context."""
    return {
        "error": {
            "message": (
                f"This model's maximum context length is {window} tokens. However, you "
                f"requested {tokens} tokens ({tokens} in the messages, 0 in the completion). "
                "Please reduce the length of the messages."
            ),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
