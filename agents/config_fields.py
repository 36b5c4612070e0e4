"""The fields of AgentConfig, declared once: each one's type, default, bounds and help.

The engine, the settings form, the API and the CLI read them from `FIELDS` (or by
name from `FIELDS_BY_NAME`); `agents.config` builds and checks configs with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal


class LimitAction(StrEnum):
    """What happens when a hard limit is reached (SPEC section 5)."""

    STOP = "stop"
    PAUSE = "pause"
    EXTEND = "extend"
    WARN = "warn"


# The longest custom instructions a user may give (characters): room for a page of
# guidance, little next to any model's context.
MAX_INSTRUCTIONS_LENGTH = 4_000

FieldKind = Literal["str", "text", "int", "float", "bool", "choice"]


@dataclass(frozen=True)
class FieldSpec:
    """One AgentConfig field: its type, default, bounds and help text. A number's bounds
    are `min` and `max`; a text's `max` is the most characters it may have."""

    name: str
    kind: FieldKind
    default: Any
    label: str
    help_text: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec(
        "model",
        "str",
        "",
        "Model",
        "A LiteLLM model string from the operator's list; empty means the server default.",
    ),
    FieldSpec(
        "max_iterations",
        "int",
        15,
        "Max iterations",
        "Model calls per round of a run. The last one answers without tools. The warning "
        "comes at least two calls ahead from 3 up; with 2 it comes with the last call, with 1 "
        "there is none (the one call is the answer).",
        min=1,
        max=50,
    ),
    FieldSpec(
        "unlimited_iterations",
        "bool",
        False,
        "Unlimited iterations",
        "No iteration limit; the operator's hard cap still applies.",
    ),
    FieldSpec(
        "soft_warning_percent",
        "int",
        70,
        "Soft warning (%)",
        "Warn at this share of the iteration, tool-call, time and cost limits (for "
        "iterations, two before the limit if that is earlier). Once per round and limit.",
        min=10,
        max=100,
    ),
    FieldSpec(
        "token_budget",
        "int",
        50_000,
        "Token budget",
        "Prompt and completion tokens of a run, subagents included.",
        min=1_000,
        max=200_000,
    ),
    FieldSpec(
        "token_warning_percent",
        "int",
        80,
        "Token warning (%)",
        "Warn at this share of the token budget.",
        min=10,
        max=100,
    ),
    FieldSpec(
        "context_compact_percent",
        "int",
        80,
        "Compact the context at (%)",
        "When a request would fill this share of the model's context window, older tool "
        "results and turns sent to the model are shortened or summarised (the conversation "
        "itself is kept whole).",
        min=50,
        max=95,
    ),
    FieldSpec(
        "timeout_seconds",
        "int",
        120,
        "Timeout (seconds)",
        "Wall time of a run; time spent paused does not count.",
        min=10,
        max=600,
    ),
    FieldSpec(
        "max_tool_calls_per_turn",
        "int",
        30,
        "Max tool calls",
        "Tool calls per run, each call counted.",
        min=1,
        max=100,
    ),
    FieldSpec(
        "max_parallel_tools",
        "int",
        3,
        "Parallel tools",
        "Tool calls of one model response that run at once.",
        min=1,
        max=10,
    ),
    FieldSpec(
        "max_cost_usd",
        "float",
        1.00,
        "Max cost (USD)",
        "Priced with LiteLLM's model prices; a model without a price costs 0.",
        min=0.01,
        max=100.00,
    ),
    FieldSpec(
        "limit_action",
        "choice",
        LimitAction.STOP.value,
        "At a limit",
        "stop, pause, extend or warn.",
        choices=tuple(action.value for action in LimitAction),
    ),
    FieldSpec(
        "extend_multiplier",
        "int",
        4,
        "Extend multiplier",
        "For extend: the iteration ceiling is multiplied by this.",
        min=2,
        max=10,
    ),
    FieldSpec(
        "max_extensions",
        "int",
        1,
        "Max extensions",
        "For extend: how many times the ceiling may be raised.",
        min=1,
        max=5,
    ),
    FieldSpec(
        "no_progress_repeats",
        "int",
        3,
        "No-progress repeats",
        "Identical consecutive actions that mean the Oracle is stuck.",
        min=2,
        max=10,
    ),
    FieldSpec(
        "max_consecutive_tool_errors",
        "int",
        3,
        "Consecutive tool errors",
        "Tool errors in a row that end the run.",
        min=1,
        max=10,
    ),
    FieldSpec(
        "custom_instructions",
        "text",
        "",
        "Custom instructions",
        "Sent to the model with every run, after the Oracle's own instructions: how to "
        "answer, what to keep in mind about you. Empty means none.",
        max=MAX_INSTRUCTIONS_LENGTH,
    ),
)

FIELDS_BY_NAME: dict[str, FieldSpec] = {spec.name: spec for spec in FIELDS}
