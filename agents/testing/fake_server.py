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
  argument_pieces: N (each tool call's arguments streamed N characters a chunk)
  error_after: N (after N chunks, an error event in the stream, as vLLM sends one)
  error: {"message", "code"} (that event's error; code 500 when not given)
  stamp: true (streamed text chunk i is sent as "w{i}t{microseconds since the epoch} ",
         stamped as it goes out, so a client can tell each token's age; bench/load.py)
  tool_rounds: N (with tool_calls: the tool calls while the request holds fewer than N
         tool results after its last user message, then the text; so one repeated
         response drives any number of runs at once through N tool steps each; "{round}"
         in a string argument becomes the number of tool results so far)
What each response sends on the wire is `agents.testing.fake_responses`.

With a `window` (tokens; `--window`), a request longer than that is refused as OpenAI
refuses one (400, `context_length_exceeded`, "This model's maximum context length is
N tokens. However, you requested M tokens ..."), taking no response from the script;
with `streams_refused_empty`, a streamed one is refused as llama-cpp-python's server
refuses it: a 200 and an empty stream (only asked again unstreamed does it get the 400).
The server counts a request's tokens its own way (`request_tokens`), as a provider's
tokenizer differs from Oracle's. Refused requests are noted in `refused`.
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

from agents.testing.fake_responses import (
    EMPTY_STREAM,
    completion,
    for_request,
    send_json,
    sleep_unless,
    stream_response,
    too_long,
)
from agents.testing.fake_responses import Response as Response
from agents.testing.fake_responses import request_tokens as request_tokens


class FakeServer:
    """The fake provider, served from a background thread on 127.0.0.1."""

    def __init__(
        self,
        script: list[Response] | None = None,
        *,
        port: int = 0,
        repeat_last: bool = False,
        window: int | None = None,
        streams_refused_empty: bool = False,
    ) -> None:
        self.port = port
        self.window = window
        # As llama-cpp-python's server: a streamed request over the window gets a 200
        # and an empty stream (its error goes to its log), an unstreamed one the 400.
        self.streams_refused_empty = streams_refused_empty
        self.requests: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []
        self.disconnects: list[float] = []
        self.sent: list[int] = []  # how many chunks each stream sent before it ended
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
            await send_json(writer, 200, {"ok": True})
            return True
        if path == "/_control/log":
            log = {
                "requests": self.requests,
                "refused": self.refused,
                "disconnects": len(self.disconnects),
            }
            await send_json(writer, 200, log)
            return True
        if not path.endswith("/chat/completions") or method != "POST":
            await send_json(writer, 404, {"error": {"message": f"no route {path}"}})
            return True

        payload = json.loads(body or b"{}")
        if self.window is not None and (tokens := request_tokens(payload)) > self.window:
            self.refused.append(payload)
            if self.streams_refused_empty and payload.get("stream"):
                writer.write(EMPTY_STREAM)
                await writer.drain()
            else:
                await send_json(writer, 400, too_long(self.window, tokens))
            return False
        with self._lock:
            self.requests.append(payload)
            if self._script:
                response = self._script[0] if self._repeat_last and len(self._script) == 1 else None
                response = for_request(response or self._script.pop(0), payload)
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
                await sleep_unless(client_gone, response["delay"])
                if client_gone.done():
                    self._note_disconnect()
                    return
            status = int(response.get("status", 200))
            if status != 200:
                body = response.get("body") or {
                    "error": {"message": f"scripted {status}", "type": "server_error"}
                }
                await send_json(writer, status, body, response.get("headers", {}))
                return
            if not payload.get("stream"):
                await send_json(writer, 200, completion(payload, response))
                return
            try:
                finished = await stream_response(writer, client_gone, payload, response, self.sent)
            except ConnectionError:  # a client that exits with bytes unread resets
                finished = False
            if not finished:
                self._note_disconnect()
        finally:
            client_gone.cancel()

    def _note_disconnect(self) -> None:
        self.disconnects.append(time.monotonic())
        self._disconnected.set()


def main() -> None:
    """Serve a script from a JSON file until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", type=Path, help="JSON: a list of responses or {responses}")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--window", type=int, help="refuse requests longer than this (tokens)")
    args = parser.parse_args()
    script: list[Response] = []
    repeat_last = False
    if args.script:
        data = json.loads(args.script.read_text())
        if isinstance(data, dict):
            script, repeat_last = data.get("responses", []), data.get("repeat_last", False)
        else:
            script = data
    server = FakeServer(script, port=args.port, repeat_last=repeat_last, window=args.window)
    server.start()
    print(f"fake server on {server.base_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
    server.stop()


if __name__ == "__main__":
    main()
