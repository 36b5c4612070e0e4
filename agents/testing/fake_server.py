"""A local OpenAI-compatible chat-completions server that plays a script.

Each POST to /v1/chat/completions takes the next scripted response: streamed
text and tool calls with a usage chunk, an error status (429 with Retry-After,
500, ...), a delay, a slow or endless stream, or a connection broken midway.
It notes every request and every stream the client closed early.

In a test: `with FakeServer(script) as server:` then LiteLLM with model
`openai/fake-model`, `api_base=server.base_url`, any api_key. From a shell:
`python -m agents.testing.fake_server --script FILE --port N`. Either way
`POST /_control/script` (a JSON script) replaces the script and
`GET /_control/log` returns the requests and disconnects.

A response is a dict; every key is optional:
  text: str or list of chunks        tool_calls: [{"name", "arguments"}]
  usage: {"prompt_tokens", "completion_tokens"}   finish_reason: str
  status: int (an error when not 200) headers: {}  body: JSON for errors
  delay: seconds before answering     chunk_delay: seconds between chunks
  hang: true (after the text, stream "." until the client goes away)
  break_after: N (drop the connection after N chunks)
  error_after: N (after N chunks, an error event in the stream, as vLLM sends one)
  error: {"message", "code"} (that event's error; code 500 when not given)
  stamp: true (streamed text chunk i is sent as "w{i}t{microseconds since the epoch} ",
         stamped as it goes out, so a client can tell each token's age; bench/load.py)
  tool_rounds: N (with tool_calls: the tool calls while the request holds fewer than N
         tool results after its last user message, then the text; so one repeated
         response drives any number of runs at once through N tool steps each; "{round}"
         in a string argument becomes the number of tool results so far)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

Response = dict[str, Any]

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests"}


class FakeServer:
    """The fake provider, served from a background thread on 127.0.0.1."""

    def __init__(
        self, script: list[Response] | None = None, *, port: int = 0, repeat_last: bool = False
    ) -> None:
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self.disconnects: list[float] = []
        self._script: list[Response] = list(script or [])
        self._repeat_last = repeat_last
        self._lock = threading.Lock()
        self._disconnected = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    @property
    def base_url(self) -> str:
        """The api_base to give LiteLLM."""
        return f"http://127.0.0.1:{self.port}/v1"

    def set_script(self, script: list[Response], *, repeat_last: bool = False) -> None:
        """Replace the responses still to be played."""
        with self._lock:
            self._script = list(script)
            self._repeat_last = repeat_last

    def wait_for_disconnect(self, timeout: float) -> bool:
        """Wait until a client closes a stream early; True if one did."""
        return self._disconnected.wait(timeout)

    # --- lifecycle --------------------------------------------------------------

    def start(self) -> FakeServer:
        """Start serving; returns once the port is bound."""
        self._thread = threading.Thread(target=self._serve_forever, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        """Stop serving and close open connections."""
        if self._loop is not None and self._loop.is_running():
            done = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
            with contextlib.suppress(Exception):
                done.result(5)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _serve_forever(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._server = loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self.port)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    # --- HTTP -------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._handle_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _handle_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        request_line = await reader.readline()
        if not request_line:
            return False
        method, path, _ = request_line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""

        if path == "/_control/script" and method == "POST":
            data = json.loads(body)
            self.set_script(data.get("responses", []), repeat_last=data.get("repeat_last", False))
            await _send_json(writer, 200, {"ok": True})
            return True
        if path == "/_control/log":
            log = {"requests": self.requests, "disconnects": len(self.disconnects)}
            await _send_json(writer, 200, log)
            return True
        if not path.endswith("/chat/completions") or method != "POST":
            await _send_json(writer, 404, {"error": {"message": f"no route {path}"}})
            return True

        payload = json.loads(body or b"{}")
        with self._lock:
            self.requests.append(payload)
            if self._script:
                response = self._script[0] if self._repeat_last and len(self._script) == 1 else None
                response = _for_request(response or self._script.pop(0), payload)
            else:
                response = {"status": 500, "body": {"error": {"message": "script exhausted"}}}
        await self._respond(reader, writer, payload, response)
        return False  # one completion per connection keeps disconnect tracking exact

    async def _respond(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        payload: dict[str, Any],
        response: Response,
    ) -> None:
        client_gone = asyncio.ensure_future(reader.read())  # b"" once the client closes
        try:
            if response.get("delay"):
                await _sleep_unless(client_gone, response["delay"])
                if client_gone.done():
                    self._note_disconnect()
                    return
            status = int(response.get("status", 200))
            if status != 200:
                body = response.get("body") or {
                    "error": {"message": f"scripted {status}", "type": "server_error"}
                }
                await _send_json(writer, status, body, response.get("headers", {}))
                return
            if not payload.get("stream"):
                await _send_json(writer, 200, _completion(payload, response))
                return
            finished = await self._stream(writer, client_gone, payload, response)
            if not finished:
                self._note_disconnect()
        finally:
            client_gone.cancel()

    async def _stream(
        self,
        writer: asyncio.StreamWriter,
        client_gone: asyncio.Future[bytes],
        payload: dict[str, Any],
        response: Response,
    ) -> bool:
        """Stream the response; False when the client went away first."""
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
                await _sleep_unless(client_gone, delay)
            if client_gone.done():
                return False
            if number == hang_at:
                return await self._hang(writer, client_gone, delay or 0.05)
            if stamp and 1 <= number <= text_count:
                chunk = _delta({"content": f"w{number - 1}t{time.time_ns() // 1000} "})
            await _send_chunk(writer, chunk)
        await _send_raw(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _hang(
        self, writer: asyncio.StreamWriter, client_gone: asyncio.Future[bytes], delay: float
    ) -> bool:
        while not client_gone.done():
            await _sleep_unless(client_gone, delay)
            if client_gone.done():
                break
            try:
                await _send_chunk(writer, _delta({"content": "."}))
            except ConnectionError:
                break
        return False

    def _note_disconnect(self) -> None:
        self.disconnects.append(time.monotonic())
        self._disconnected.set()


def _for_request(response: Response, payload: dict[str, Any]) -> Response:
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


async def _sleep_unless(client_gone: asyncio.Future[bytes], seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
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
    chunks += [_delta({"tool_calls": [call]}) for call in calls]
    chunks.append(_delta({}, finish))
    if (payload.get("stream_options") or {}).get("include_usage"):
        usage_chunk = _delta({})
        usage_chunk["choices"] = []
        usage_chunk["usage"] = _usage(payload, response)
        chunks.append(usage_chunk)
    return chunks


def _completion(payload: dict[str, Any], response: Response) -> dict[str, Any]:
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


async def _send_json(
    writer: asyncio.StreamWriter,
    status: int,
    body: object,
    headers: dict[str, str] | None = None,
) -> None:
    data = json.dumps(body).encode()
    reason = _REASONS.get(status, "Error")
    lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    lines += [f"Content-Length: {len(data)}", "Connection: close", "", ""]
    writer.write("\r\n".join(lines).encode() + data)
    await writer.drain()


def main() -> None:
    """Serve a script from a JSON file until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", type=Path, help="JSON: a list of responses or {responses}")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    script: list[Response] = []
    repeat_last = False
    if args.script:
        data = json.loads(args.script.read_text())
        if isinstance(data, dict):
            script, repeat_last = data.get("responses", []), data.get("repeat_last", False)
        else:
            script = data
    server = FakeServer(script, port=args.port, repeat_last=repeat_last).start()
    print(f"fake server on {server.base_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
    server.stop()


if __name__ == "__main__":
    main()
