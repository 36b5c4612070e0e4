"""No progress: the latest tool calls repeat a short cycle and nothing changes.

A run is stuck when its most recent tool calls repeat one call, or a cycle of up
to `max_period` calls taking turns, `repeats` times over with the same arguments
*and* the same results. The result is part of the comparison because that is
what tells work from a loop:

- paging (an offset, page or cursor that moves on) has new arguments each time;
- polling that sees new data, and a retry that succeeds, have new results;
- a failing call retried with the same error is stuck: repeating it changes
  nothing. (Failures with varying errors are left to the tool-error limit.)

Only the end of the trace counts, so a run that broke out of a cycle goes on.
Cycles longer than `max_period` are not looked for; the tool-call budget bounds
them. Pure and free of I/O: the decision tree calls it after every tool result.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from agents.tools import ToolResult

MAX_PERIOD = 3
_SHOWN_WIDTH = 40


@dataclass(frozen=True, slots=True)
class Action:
    """One tool call as the detector compares it.

    `arguments` is canonical JSON, so key order and spacing never make a call new.
    `outcome` is the ok flag and a digest of the result ("ok:3f2a…", "error:…"),
    so the same call seeing a new result is a new action.
    """

    name: str
    arguments: str
    outcome: str

    @classmethod
    def from_result(cls, result: ToolResult) -> Action:
        arguments = json.dumps(result.arguments, sort_keys=True, separators=(",", ":"))
        # surrogatepass: a tool may echo a lone surrogate from the model's JSON.
        content = result.content.encode("utf-8", "surrogatepass")
        digest = hashlib.blake2b(content, digest_size=8).hexdigest()
        return cls(result.name, arguments, f"{'ok' if result.ok else 'error'}:{digest}")

    @property
    def failed(self) -> bool:
        return self.outcome.startswith("error:")

    def call_text(self) -> str:
        """The call as a user would write it, e.g. `read_document(doc_id=doc-7, page=2)`.

        A lone argument shows its value only; the argument text is cut to 40 characters.
        """
        arguments = json.loads(self.arguments)
        if isinstance(arguments, dict) and len(arguments) == 1:
            shown = _value_text(next(iter(arguments.values())))
        elif isinstance(arguments, dict):
            shown = ", ".join(f"{key}={_value_text(value)}" for key, value in arguments.items())
        else:
            shown = _value_text(arguments)
        if len(shown) > _SHOWN_WIDTH:
            shown = shown[: _SHOWN_WIDTH - 1] + "…"
        return f"{self.name}({shown})"


@dataclass(frozen=True)
class Stuck:
    """A cycle of `period` calls (`actions`, oldest first) just repeated `repeats` times."""

    period: int
    repeats: int
    actions: tuple[Action, ...]

    def describe(self) -> str:
        """What the user is told, e.g. '3 identical calls of calculator(1+1) in a row'."""
        calls = ", ".join(action.call_text() for action in self.actions)
        if self.period == 1:
            failing = ", failing the same way each time" if self.actions[0].failed else ""
            return f"{self.repeats} identical calls of {calls} in a row{failing}"
        return f"the same {self.period} calls ({calls}) {self.repeats} times over"


def find_cycle(
    actions: Sequence[Action], repeats: int, max_period: int = MAX_PERIOD
) -> Stuck | None:
    """The shortest cycle the latest `actions` repeat `repeats` times, or None.

    The last `period * repeats` actions are a cycle when each equals the one a
    period before it. Periods are tried shortest first, so six identical
    calls are one call six times, not a pair three times. Only the last
    `history_size(repeats, max_period)` actions are read, and each period stops
    at its first mismatch: at most (repeats - 1) * max_period * (max_period + 1) / 2
    comparisons, 12 with the defaults.
    """
    if repeats < 2 or max_period < 1:
        raise ValueError("a cycle needs repeats >= 2 and max_period >= 1")
    end = len(actions)
    for period in range(1, max_period + 1):
        start = end - period * repeats
        if start < 0:
            break
        if all(actions[i] == actions[i - period] for i in range(start + period, end)):
            return Stuck(period, repeats, tuple(actions[i] for i in range(end - period, end)))
    return None


def history_size(repeats: int, max_period: int = MAX_PERIOD) -> int:
    """How many recent actions to keep so that `find_cycle` sees every cycle it looks for."""
    return repeats * max_period


def _value_text(value: object) -> str:
    if isinstance(value, str):
        return " ".join(value.split())
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
