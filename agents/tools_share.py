"""The tools' share of each model call: every offered tool's name, description and
JSON Schema go with every request, counted as one more message. When that share is
what makes the next call pass the token budget, the stop says so in figures, and
what helps: fewer tools (switching MCP servers off on the Tools page) or a larger
budget. The settings page counts the same way, to show the share beside the budget."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from agents.figures import number
from agents.state import LimitHit, Metric

Counter = Callable[[Sequence[dict[str, Any]]], int]  # a model's `count_tokens`


def schemas_tokens(count_tokens: Counter, schemas: Sequence[dict[str, Any]]) -> int:
    """The tokens `schemas` take in each call, as the model counts them (0 for none)."""
    if not schemas:
        return 0
    return int(count_tokens([{"role": "system", "content": json.dumps(list(schemas))}]))


def share_words(count: int, tokens: int, limit: float) -> str:
    """ "the 17 tools' descriptions take 2,750 tokens of your 2,000"."""
    tools = f"the {count:,} tools' descriptions take"
    if count == 1:
        tools = "the tool's description takes"
    return f"{tools} {tokens:,} tokens of your {number(Metric.TOKENS, limit)}"


def tools_cause(hit: LimitHit, *, prompt: int, tools_tokens: int, count: int) -> str:
    """The words naming the tools as the cause of a token-budget stop on the next call's
    estimate (`prompt`, of which `tools_tokens` are the tools'), when without them the
    call would have fitted; "" otherwise."""
    if hit.metric != Metric.TOKENS or not hit.projected or not tools_tokens:
        return ""
    if hit.value + prompt - tools_tokens > hit.limit:
        return ""  # the conversation alone would pass it: the tools are not the cause
    return share_words(count, tools_tokens, hit.limit)


def because(hit: LimitHit) -> str:
    """ ": the 17 tools' descriptions take ..." after a stop's figures, when the tools'
    share is its cause; "" otherwise."""
    return f": {hit.detail}" if is_tools_cause(hit) else ""


def advice(hit: LimitHit | None) -> str:
    """What helps a run stopped by the tools' share, or "" for another stop."""
    if not is_tools_cause(hit):
        return ""
    return (
        "Switch off the MCP servers you do not need on the Tools page, or raise your "
        "token budget in Settings; then press Continue."
    )


def is_tools_cause(hit: LimitHit | None) -> bool:
    """Whether a stop's hit names the tools' share as its cause."""
    return hit is not None and hit.metric == Metric.TOKENS and hit.projected and bool(hit.detail)
