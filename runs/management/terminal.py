"""How `manage.py ask` shows a run's events in a terminal: a transcript a person reads,
or one JSON event a line for a program."""

from __future__ import annotations

import json
from typing import Any

from agents.events import Event, EventType
from agents.subagents import SubagentEvent


class Printer:
    """Writes the run's events to the command's stdout."""

    def __init__(self, out: Any) -> None:
        self.out = out

    async def __call__(self, event: Event) -> None:
        raise NotImplementedError


class JsonPrinter(Printer):
    """One JSON event a line, nothing else."""

    async def __call__(self, event: Event) -> None:
        self.out.write(json.dumps(event, default=str))
        self.out.flush()


class TranscriptPrinter(Printer):
    """A human-readable transcript: streamed text, tool steps, notices, the ending."""

    async def __call__(self, event: Event) -> None:
        kind = event["type"]
        if kind == EventType.RUN_STARTED:
            self.out.write(f"[Oracle · {event['model']}]")
        elif kind == EventType.ASSISTANT_DELTA:
            self.out.write(event["text"], ending="")
        elif kind == EventType.ASSISTANT_MESSAGE and not event["final"]:
            self.out.write("")
        elif kind == EventType.TOOL_CALL:
            arguments = ", ".join(f"{k}={v!r}" for k, v in dict(event["arguments"]).items())
            self.out.write(f"  → {event['name']}({arguments})")
        elif kind == EventType.TOOL_RESULT:
            mark = "←" if event["ok"] else "✗"
            self.out.write(f"  {mark} {event['content']}")
        elif kind == EventType.SYSTEM_NOTICE:
            self.out.write(f"\n[System · {event['severity']}] {event['text']}")
        elif kind == EventType.CONTEXT_COMPACTED:
            self.out.write(f"\n[System · info] {event['text']}")
        elif kind == SubagentEvent.STARTED:
            self.out.write(f"  ⇢ {event['agent_type']}: {event['task']}")
        elif kind == SubagentEvent.STEP and event["event"]["type"] == EventType.TOOL_CALL:
            self.out.write(f"    · {event['event']['name']}")
        elif kind == SubagentEvent.FINISHED:
            self.out.write(f"  ⇠ {event['agent_type']}: {event['label']}")
        elif kind == EventType.BUDGET_EXTENDED:
            self.out.write(f"[iteration limit raised from {event['from']} to {event['to']}]")
        elif kind == EventType.RUN_FINISHED:
            calls = event["tool_calls"]
            self.out.write(
                f"\n— {event['reason']} · {event['iterations']} iterations · "
                f"{calls} tool call{'s' if calls != 1 else ''} · {event['tokens']:,} tokens · "
                f"${event['cost_usd']:.4f} · {event['elapsed_ms'] / 1000:.1f} s"
            )
        self.out.flush()
