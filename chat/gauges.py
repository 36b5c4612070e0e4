"""A run's gauges: what the round used against its limits, each turning to the warning
colour at the user's own warning percentage, for the page, the live stream and a
subagent's panel alike; and, when the model's context window is known, how much of it
the latest call's prompt took (not a round's sum: each call is sent whole)."""

from __future__ import annotations

from typing import Any

from django.utils.safestring import SafeString

from agents import wording
from agents.state import Metric
from chat.partials import render_partial

_METRICS = {metric.value for metric in Metric}
_GAUGE_METRICS = {"cost_usd": Metric.COST, "elapsed_s": Metric.TIME}


def figure(metric: str, value: Any) -> str:
    """A figure as the System messages write it ('$0.045', '10.3', '1,500')."""
    if not isinstance(value, int | float):
        return str(value)
    return wording.number(metric, value) if metric in _METRICS else f"{value:,}"


GAUGES = (  # counter, label, the limit's field, the field of its warning percentage
    ("iterations", "Iterations", "max_iterations", "soft_warning_percent"),
    ("tool_calls", "Tool calls", "max_tool_calls_per_turn", "soft_warning_percent"),
    ("tokens", "Tokens", "token_budget", "token_warning_percent"),
    ("cost_usd", "Cost (USD)", "max_cost_usd", "soft_warning_percent"),
    ("elapsed_s", "Seconds", "timeout_seconds", "soft_warning_percent"),
)


CONTEXT_GAUGE = ("context", "Context", "token_warning_percent")  # as GAUGES, no limit field
CONTEXT_TITLE = "The latest call's prompt against the model's context window, in tokens"


def gauge_rows(
    used: dict[str, Any],
    limits: dict[str, Any],
    *,
    status: str,
    context: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Each gauge: what the round `used` against the round's `limits` (its settings),
    turning to the warning colour at the user's own warning percentage; then the latest
    call's prompt against the model's window (`context`, a `context.used` event's
    `prompt_tokens` and `window`) when a window is known."""
    rows = []
    for key, label, limit_key, warn_key in GAUGES:
        value = used.get(key, 0) or 0
        limit = limits.get(limit_key)
        if key == "iterations" and limits.get("unlimited_iterations"):
            limit = None
        metric = _GAUGE_METRICS.get(key, Metric.ITERATIONS)
        ticking = key == "elapsed_s" and status == "running"
        rows.append(_row(key, label, metric, value, limit, limits.get(warn_key), ticking=ticking))
    window = int((context or {}).get("window") or 0)
    if window > 0:
        key, label, warn_key = CONTEXT_GAUGE
        prompt = int((context or {}).get("prompt_tokens") or 0)
        row = _row(key, label, Metric.CONTEXT, prompt, window, limits.get(warn_key))
        rows.append({**row, "title": CONTEXT_TITLE})
    return rows


def _row(
    key: str,
    label: str,
    metric: str,
    value: Any,
    limit: Any,
    warning_percent: Any,
    *,
    ticking: bool = False,
) -> dict[str, Any]:
    low = int(warning_percent or 70)
    return {
        "key": key,
        "label": label,
        "value": value,
        "limit": limit,
        "shown": figure(metric, value),
        "shown_limit": figure(metric, limit) if limit else "∞",
        "percent": min(100, round(100 * value / limit)) if limit else 0,
        "low": low,
        "high": max(low, 90),
        "ticking": ticking,
    }


def gauge(row: dict[str, Any]) -> SafeString:
    """One gauge, to replace its old self (the others read the same)."""
    return render_partial("_gauge.html", gauge=row, swap_oob=True)


STREAMED_TOKENS_STEP = 100  # the gauges move with a streaming answer every ~100 tokens


def gauge_counters(counters: dict[str, Any]) -> dict[str, Any]:
    """Counters as the gauges count them (seconds, not milliseconds)."""
    return {
        "iterations": counters.get("iterations", 0),
        "tool_calls": counters.get("tool_calls", 0),
        "tokens": counters.get("tokens", 0),
        "cost_usd": counters.get("cost_usd", 0.0),
        "elapsed_s": round((counters.get("elapsed_ms") or 0) / 1000),
    }
