"""What compaction costs on a long conversation: per turn, the wall time and the tokens
(compaction calls included) of N long messages against a small window, against the same
conversation with a window so large that nothing is compacted.

    .venv/bin/python bench/context.py [--messages 10] [--words 900] [--window 3000]
        [--passes 3] [--llama] [--json FILE]

One user sends `--messages` messages of `--words` words each (about 1,000 tokens at
900), one run each, through `start_run` and LiteLLM over HTTP, with the built-in
tools; each run carries into the next what the app carries: the conversation's turns,
the summary an earlier run made of them and a window a refusal taught.

With the fake provider (`agents/testing/fake_server.py`, answering "Noted, thank you."
at once): the small conversation's server refuses a request past `--window` tokens
(counted its own way, as OpenAI refuses one), and its runs know no window until that
refusal teaches it, as for a model LiteLLM does not know; the large one's server has no
window, and its runs know a window of a million tokens, so the same fitting runs and
never has to shorten anything. With `--llama`: llama-cpp-python's server with SmolLM2
(`bench/llama_server.py`, `make llama`) at `--n_ctx` `--window` (4,096 by default), the
runs knowing that window from the start (the operator's `ORACLE_MODEL_WINDOWS`; a run
that does not know it learns it from the server's refusal, as `make test-llama` shows),
against one at `--n_ctx` large enough for the whole conversation.
A real model writes answers of its own length, so there the tokens differ by more than
compaction.

Each pass runs both conversations, the small first in odd passes and the large first
in even ones; ms are the median over passes, tokens and calls those of the first pass.
Prints a table a turn (Markdown), then the totals.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import statistics
import sys
import time
from collections.abc import AsyncGenerator, Iterator
from contextlib import aclosing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agents.builtin_tools import builtin_tools
from agents.config import AgentConfig
from agents.context.window import ContextWindow, WindowSource
from agents.events import EventCollector
from agents.loop import RunDeps, Summary, start_run
from agents.model import ModelError, ModelProblem, ModelRequest, StreamPart
from agents.testing.fake_server import FakeServer
from agents.tree import DefaultDecisionTree

WORDS = [
    "owl", "river", "stone", "lantern", "maple", "quiet", "harbor", "ember", "violet", "canyon",
]  # fmt: skip
LARGE = 1_000_000  # the large conversation's window with the fake provider
CONFIG = {"timeout_seconds": 600, "token_budget": 200_000}
# Each conversation by name ("small", "large"): its model, and the window its runs know.
Setups = dict[str, tuple[Any, ContextWindow | None]]


def long_message(number: int, words: int = 900) -> str:
    """About 1,000 tokens at 900 words, saying which message it is."""
    chosen = random.Random(number)
    return f"Message {number}: " + " ".join(chosen.choice(WORDS) for _ in range(words))


@dataclass
class Call:
    """One request the model was sent: a compaction call or not, and how it ended."""

    compaction: bool
    messages: list[dict[str, Any]]
    error: ModelError | None = None

    @property
    def refused(self) -> bool:
        return self.error is not None and self.error.kind is ModelProblem.CONTEXT_TOO_LONG


class Recorded:
    """A model that notes every request it is sent (a real server keeps no list), the
    rest left to the model it wraps."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.calls: list[Call] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamPart, None]:
        call = Call(bool(request.max_tokens), [dict(m) for m in request.messages])
        self.calls.append(call)
        try:
            async with aclosing(self.model.stream(request)) as parts:
                async for part in parts:
                    yield part
        except ModelError as error:
            call.error = error
            raise


@dataclass
class Turn:
    """One run of a conversation, as measured."""

    ms: float
    tokens: int
    reason: str
    calls: list[Call]
    events: list[dict[str, Any]]

    @property
    def compaction_calls(self) -> int:
        return sum(call.compaction for call in self.calls)

    @property
    def refused(self) -> int:
        return sum(call.refused for call in self.calls)

    @property
    def failed(self) -> int:
        return sum(call.error is not None and not call.refused for call in self.calls)


@dataclass
class Conversation:
    """Runs one after another, carrying what the app carries from one to the next."""

    model: Recorded
    window: ContextWindow | None = None
    config: AgentConfig = field(default_factory=lambda: AgentConfig.from_raw(CONFIG))
    history: list[dict[str, Any]] = field(default_factory=list)
    summary: Summary | None = None

    async def send(self, question: str) -> Turn:
        deps = RunDeps(
            model=self.model,
            tree=DefaultDecisionTree(self.config),
            tools=builtin_tools(),
            window=self.window,
        )
        events = EventCollector()
        first_call = len(self.model.calls)
        started = time.perf_counter()
        result = await start_run(
            question, deps, on_event=events, history=self.history, summary=self.summary
        )
        ms = 1000 * (time.perf_counter() - started)
        self.history += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": result.final_text},
        ]
        for event in events.of_type("context.refused"):
            self.window = ContextWindow(
                event["window"], source=WindowSource.LEARNED, ratio=event["ratio"]
            )
        for event in events.of_type("context.compacted"):
            if event["summary"]:
                self.summary = Summary(event["summary"], event["covers"])
        reason = result.reason.value if result.reason else "none"
        calls = self.model.calls[first_call:]
        return Turn(ms, result.state.total.tokens, reason, calls, events.events)


async def converse(model: Any, window: ContextWindow | None, questions: list[str]) -> list[Turn]:
    conversation = Conversation(Recorded(model), window)
    return [await conversation.send(question) for question in questions]


def litellm_model(base_url: str, name: str) -> Any:
    from agents.litellm_model import LiteLLMModel

    return LiteLLMModel(name, api_base=base_url, api_key="x")


@contextmanager
def fake_servers(args: argparse.Namespace) -> Iterator[Setups]:
    reply = [{"text": "Noted, thank you."}]
    with (
        FakeServer(reply, repeat_last=True, window=args.window) as small,
        FakeServer(reply, repeat_last=True) as large,
    ):
        yield {
            "small": (litellm_model(small.base_url, "openai/fake-model"), None),
            "large": (
                litellm_model(large.base_url, "openai/fake-model"),
                ContextWindow(LARGE, source=WindowSource.OPERATOR),
            ),
        }


@contextmanager
def llama_servers(args: argparse.Namespace) -> Iterator[Setups]:
    from llama_server import LlamaServer

    # Room for every message and an answer of up to 1,000 tokens after each.
    needed = args.messages * (args.words * 3 // 2 + 1_000) + 2_000
    large_ctx = 1 << (needed - 1).bit_length()
    with LlamaServer(n_ctx=args.window) as small, LlamaServer(n_ctx=large_ctx) as large:
        yield {
            "small": (
                litellm_model(small.base_url, "openai/smollm2"),
                ContextWindow(args.window, source=WindowSource.OPERATOR),
            ),
            "large": (
                litellm_model(large.base_url, "openai/smollm2"),
                ContextWindow(large_ctx, source=WindowSource.OPERATOR),
            ),
        }


async def measure(args: argparse.Namespace) -> dict[str, list[list[Turn]]]:
    questions = [long_message(n, args.words) for n in range(1, args.messages + 1)]
    servers = llama_servers if args.llama else fake_servers
    passes: dict[str, list[list[Turn]]] = {"small": [], "large": []}
    with servers(args) as setups:
        for model, window in setups.values():  # a process's first call loads LiteLLM's transport
            await converse(model, window, ["Warm up."])
        for number in range(args.passes):
            order = ("small", "large") if number % 2 == 0 else ("large", "small")
            for name in order:
                model, window = setups[name]
                passes[name].append(await converse(model, window, questions))
    return passes


def figures(passes: dict[str, list[list[Turn]]]) -> dict[str, Any]:
    small, large = passes["small"], passes["large"]
    turns = []
    for index, (one, other) in enumerate(zip(small[0], large[0], strict=True)):
        turns.append(
            {
                "turn": index + 1,
                "ms_small": statistics.median(p[index].ms for p in small),
                "ms_large": statistics.median(p[index].ms for p in large),
                "tokens_small": one.tokens,
                "tokens_large": other.tokens,
                "compaction_calls": one.compaction_calls,
                "compacted": len([e for e in one.events if e["type"] == "context.compacted"]),
                "refused": one.refused,
                "failed": one.failed + other.failed,
                "reason_small": one.reason,
                "reason_large": other.reason,
                "large_compaction_calls": other.compaction_calls,
            }
        )
    count = len(turns)

    def total(key: str) -> float:
        return sum(turn[key] for turn in turns)

    return {
        "turns": turns,
        "compaction_calls": int(total("compaction_calls")),
        "refused": int(total("refused")),
        "failed": int(total("failed")),
        "large_compaction_calls": int(total("large_compaction_calls")),
        "completed_small": sum(t["reason_small"] == "completed" for t in turns),
        "completed_large": sum(t["reason_large"] == "completed" for t in turns),
        "tokens_per_turn_small": total("tokens_small") / count,
        "tokens_per_turn_large": total("tokens_large") / count,
        "ms_per_turn_small": total("ms_small") / count,
        "ms_per_turn_large": total("ms_large") / count,
    }


def report(result: dict[str, Any], args: argparse.Namespace) -> None:
    provider = f"llama-cpp-python n_ctx {args.window}" if args.llama else "fake provider"
    print(
        f"Compaction's cost: {args.messages} messages of {args.words} words, {provider}, "
        f"window {args.window:,} tokens against one where nothing is compacted"
    )
    print(f"({args.passes} pass(es); ms: median over passes)\n")
    print(
        "| turn | compaction calls | refused | tokens small | tokens large | ms small "
        "| ms large | ends (small / large) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for turn in result["turns"]:
        print(
            f"| {turn['turn']} | {turn['compaction_calls']} | {turn['refused']} "
            f"| {turn['tokens_small']:,} | {turn['tokens_large']:,} "
            f"| {turn['ms_small']:.1f} | {turn['ms_large']:.1f} "
            f"| {turn['reason_small']} / {turn['reason_large']} |"
        )
    small_tokens, large_tokens = result["tokens_per_turn_small"], result["tokens_per_turn_large"]
    small_ms, large_ms = result["ms_per_turn_small"], result["ms_per_turn_large"]
    print(
        f"\n{len(result['turns'])} turns: {result['compaction_calls']} compaction calls, "
        f"{result['refused']} refused requests, {result['failed']} failed; completed "
        f"{result['completed_small']} (small) and {result['completed_large']} (large)"
    )
    print(
        f"tokens a turn: {small_tokens:,.0f} against {large_tokens:,.0f} "
        f"({small_tokens - large_tokens:+,.0f}); "
        f"ms a turn: {small_ms:.1f} against {large_ms:.1f} ({small_ms - large_ms:+.1f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=10, help="turns of the conversation")
    parser.add_argument("--words", type=int, default=900, help="words a message")
    parser.add_argument("--window", type=int, help="the small window, tokens (3000; 4096 llama)")
    parser.add_argument("--passes", type=int, help="both conversations, each (3; 1 with --llama)")
    parser.add_argument("--llama", action="store_true", help="the real llama server, not fake")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    args.window = args.window or (4096 if args.llama else 3000)
    args.passes = args.passes or (1 if args.llama else 3)
    if args.messages < 1 or args.words < 1 or args.passes < 1 or args.window < 256:
        parser.error("--messages, --words and --passes must be 1 or more, --window 256 or more")
    # The refusal that teaches the small conversation its window is expected: not logged.
    logging.getLogger("agents.litellm_model").setLevel(logging.ERROR)
    result = figures(asyncio.run(measure(args)))
    report(result, args)
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"json": None}, **result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
