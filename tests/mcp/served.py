"""The MCP servers the tests configure: `mcp-server-time` from PyPI and our testing
server as `mcpServers` entries, and `@modelcontextprotocol/server-everything` from npm
(tests/mcp/package.json; `make test` installs it) served over HTTP."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

EVERYTHING = (
    Path(__file__).resolve().parent
    / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
NODE = shutil.which("node") or "/usr/bin/node"
ROOT = Path(__file__).resolve().parents[2]


def mcp_time_server() -> dict[str, object]:
    """The `mcpServers` entry of `mcp-server-time` (a dev dependency), over stdio."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_time"]}


def mcp_testing_server(*args: str, **keys: object) -> dict[str, object]:
    """The `mcpServers` entry of our testing server over stdio, with its command-line
    `args` and more of the entry's `keys` (`env` adds to what it needs)."""
    env = {"PYTHONPATH": str(ROOT), **keys.pop("env", {})}  # type: ignore[dict-item]
    return {
        "command": sys.executable,
        "args": ["-m", "tests.mcp.testing_server", *args],
        "env": env,
        **keys,
    }


def listening(port: int) -> bool:
    """Whether something on this machine takes connections on `port`."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def everything_served(transport: str, port: int | None = None) -> Iterator[str]:
    """server-everything over `transport` ("streamableHttp" or "sse") on a loopback port;
    yields its address."""
    assert EVERYTHING.exists(), "server-everything is missing: run `make test` (npm ci)"
    port = port or free_port()
    process = subprocess.Popen(
        [NODE, str(EVERYTHING), transport],
        env={"PATH": os.environ["PATH"], "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            assert process.poll() is None, f"server-everything ({transport}) exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"server-everything ({transport}) is silent"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}"
    finally:
        process.kill()
        process.wait()
