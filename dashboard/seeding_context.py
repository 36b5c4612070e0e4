"""A seeded run's model and what its context window did: requests refused as too long
(`context.refused`) and requests shortened to fit (`context.compacted`, with the System
message the recorder writes for each), more often on a model with a small window."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agents.context import words
from agents.events import EventType
from agents.state import LimitHit, Metric
from chat.models import Role
from dashboard.seeding_rows import Tables


@dataclass(frozen=True)
class SeededModel:
    name: str
    window: int
    compacts: float  # share of its runs that shorten a request at least once
    refused: float  # share of its runs a provider refuses a request of


MODELS = (
    SeededModel("openai/gpt-4o-mini", 128_000, 0.03, 0.002),
    SeededModel("anthropic/claude-3-5-haiku", 200_000, 0.02, 0.001),
    SeededModel("openai/gpt-4o", 128_000, 0.03, 0.002),
    SeededModel("ollama/llama3.1:8b", 8_192, 0.35, 0.05),
)
MODEL_WEIGHTS = (50, 25, 15, 10)
SUMMARISED = 0.6  # share of compactions that summarise older turns


def context_events(
    rng: random.Random,
    tables: Tables,
    model: SeededModel,
    conversation_id: uuid.UUID,
    run_id: uuid.UUID,
    seq: int,
    events: list[dict[str, Any]],
    at: datetime,
) -> int:
    """Add a run's refusals and compactions (if any) to `events`, and the System message
    of each compaction to `tables`; the conversation's last message seq."""
    if rng.random() < model.refused:
        requested = int(model.window * rng.uniform(1.01, 1.3))
        events.append(
            {
                "type": EventType.CONTEXT_REFUSED,
                "model": model.name,
                "window": model.window,
                "requested": requested,
                "ratio": 1.0,
                "status": 400,
            }
        )
    if rng.random() >= model.compacts:
        return seq
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        summarised = rng.random() < SUMMARISED
        before = int(model.window * rng.uniform(0.8, 3.0))
        after = int(model.window * rng.uniform(0.3, 0.55))
        stubbed, cut = (0, 0) if summarised else (rng.randint(1, 6), rng.choice((0, 0, 1)))
        text = words.compacted_notice(model.window, before, after, summarised, stubbed, cut)
        figures = {
            "model": model.name,
            "window": model.window,
            "before": before,
            "after": after,
            "summarised": summarised,
            "stubbed": stubbed,
            "cut": cut,
            "summary": "Seeded summary." if summarised else "",
            "covers": 0,
        }
        events.append({"type": EventType.CONTEXT_COMPACTED, **figures, "text": text})
        seq += 1
        metadata = {
            "severity": "info",
            "metric": "context",
            "value": after,
            "limit": model.window,
            "context": figures,
        }
        tables.messages.add(
            conversation_id, run_id, seq, Role.SYSTEM, text, metadata, "", "", False, at
        )
    return seq


def overflow(rng: random.Random, model: SeededModel) -> LimitHit:
    """The limit hit of a run whose newest message did not fit the window."""
    room = int(model.window * 0.9)
    question = int(room * rng.uniform(1.05, 4.0))
    detail = words.overflow_detail(question, 1_500, room)
    return LimitHit(Metric.CONTEXT, question + 1_500, model.window, detail=detail)
