"""The history as one call would send it under a shape (`agents.context.view`), with
each message's tokens as the provider would count them: what the compaction step
weighs, shortens and sends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.context.view import (
    Shape,
    body_start,
    newest_user,
    render_one,
    summary_message,
    tool_calls_by_id,
)
from agents.model import Message
from agents.run.context import RunContext


@dataclass
class Fit:
    """The history's messages as sent under a shape, and their tokens."""

    run: RunContext
    messages: Sequence[Message]
    shape: Shape
    fixed: int  # the tools' schemas

    def __post_init__(self) -> None:
        self.calls = tool_calls_by_id(self.messages)
        self.start = body_start(self.messages)
        self.question = newest_user(self.messages)
        self.recount()

    def form(self, index: int) -> Message:
        return render_one(self.messages, index, self.shape, self.calls, self.run.deps.pictures)

    def recount(self) -> None:
        self.counts = [self.run.count(self.form(i)) for i in range(len(self.messages))]
        self.summary_tokens = (
            self.run.count(summary_message(self.shape.summary)) if self.shape.summary else 0
        )

    def sent_indices(self, summary_end: int | None = None) -> list[int]:
        end = self.shape.summary_end if summary_end is None else summary_end
        if end <= self.start:
            return list(range(len(self.messages)))
        pinned = [self.question] if self.start <= self.question < end else []
        return [*range(self.start), *pinned, *range(end, len(self.messages))]

    def images_named(self) -> int:
        """How many user messages are sent naming their images instead of showing them."""
        return sum(
            self.form(i) is not self.messages[i]
            for i in range(self.shape.pictures_from)
            if self.messages[i].get("role") == "user" and i not in self.shape.cut
        )

    @property
    def total(self) -> int:
        return self.fixed + self.summary_tokens + sum(self.counts[i] for i in self.sent_indices())

    def sent(self) -> list[Message]:
        head = [self.form(i) for i in range(self.start)]
        rest = [self.form(i) for i in self.sent_indices()[self.start :]]
        summary = (
            [summary_message(self.shape.summary)] if self.shape.summary_end > self.start else []
        )
        return [*head, *summary, *rest]
