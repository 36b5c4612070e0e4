"""How the figures of a limit are written for people: '1,500', '11 of 15 tokens',
'$0.045', and what each limit is called ('iteration limit', 'token budget')."""

from __future__ import annotations

from agents.codes import Metric
from agents.limit_hit import exact

_LIMIT_NAMES = {
    Metric.ITERATIONS: "iteration limit",
    Metric.TOOL_CALLS: "tool-call limit",
    Metric.TOKENS: "token budget",
    Metric.TIME: "time limit",
    Metric.COST: "cost limit",
    Metric.REPEATS: "limit on repeated steps",
    Metric.TOOL_ERRORS: "limit on failed tool calls in a row",
    Metric.ATTEMPTS: "limit on attempts",
    Metric.SILENCE: "limit on a silent worker",
    Metric.CONTEXT: "model's context window",
}


def number(metric: str, value: float) -> str:
    """A figure as people read it: '1,500', '10.3', '$0.045' (as many digits as are true)."""
    value = exact(metric, value)
    if metric == Metric.COST:
        text = f"{value:,.6f}".rstrip("0")
        decimals = len(text.partition(".")[2])
        return "$" + (text + "0" * (2 - decimals) if decimals < 2 else text)
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}"


def figures(metric: str, value: float, limit: float) -> str:
    """'11 of 15', '40,100 of 50,000 tokens', '$0.045 of $0.05', '10.3 of 10 seconds'."""
    unit = {Metric.TIME: " seconds", Metric.TOKENS: " tokens", Metric.SILENCE: " seconds"}
    return f"{number(metric, value)} of {number(metric, limit)}{unit.get(Metric(metric), '')}"


def limit_name(metric: str) -> str:
    """'iteration limit', 'token budget', ..."""
    return _LIMIT_NAMES[Metric(metric)]
