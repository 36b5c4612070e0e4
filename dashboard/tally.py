"""What the finished runs of a span of time add up to on the dashboard: a `Tally`, made
of `Group`s (per agent type and skill), `Hour`s and `ContextCounts` (per model), that
adds up and keeps as JSON.

Percentiles come from counts of values: iterations exactly, tokens rounded up to a
thousand (the recommendation's own step, so the advice is exact), seconds and cost
rounded up to three significant figures (1,234 ms counts as 1,240 ms).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.state import LIMIT_REASONS, TerminationReason
from dashboard.aggregates import Distribution, values_of

COMPLETED = TerminationReason.COMPLETED.value
ITERATION_STOPS = {
    TerminationReason.MAX_ITERATIONS.value,
    TerminationReason.TURN_BUDGET_EXHAUSTED.value,
}
TOKEN_STOPS = {TerminationReason.TOKEN_BUDGET.value}
MICRO = 1_000_000  # costs are counted in millionths of a dollar
TOKEN_STEP = 1_000  # tokens are counted to the thousand above (the advice's step)
FIGURES = 3  # seconds and cost are counted to three significant figures, rounded up
VERSION = 3  # of a tally's JSON: a tally of another version is counted again


def rounded_up(value: int, figures: int = FIGURES) -> int:
    """`value` rounded up to `figures` significant figures (1,234 → 1,240)."""
    digits = len(str(abs(value)))
    if digits <= figures:
        return value
    step = int(10 ** (digits - figures))
    return -(-value // step) * step


def tokens_rounded_up(tokens: int) -> int:
    return -(-tokens // TOKEN_STEP) * TOKEN_STEP


@dataclass
class Group:
    """What one agent type (and skill) did: counts, sums and counts of values."""

    runs: int = 0
    limit_hits: int = 0
    cost: float = 0.0
    iterations: int = 0
    elapsed_ms: int = 0
    iteration_counts: Distribution = field(default_factory=Distribution)
    elapsed_counts: Distribution = field(default_factory=Distribution)  # ms, rounded up
    cost_counts: Distribution = field(default_factory=Distribution)  # millionths, rounded up
    completed_iterations: Distribution = field(default_factory=Distribution)
    completed_tokens: Distribution = field(default_factory=Distribution)  # to the thousand
    stopped_at_iterations: int = 0
    stopped_at_tokens: int = 0

    COUNTS = (
        "iteration_counts",
        "elapsed_counts",
        "cost_counts",
        "completed_iterations",
        "completed_tokens",
    )
    SUMS = (
        "runs",
        "limit_hits",
        "cost",
        "iterations",
        "elapsed_ms",
        "stopped_at_iterations",
        "stopped_at_tokens",
    )

    @classmethod
    def counted(cls, rows: Iterable[tuple[str, Mapping[str, Any]]]) -> Group:
        """A group from rows of a grouped query (`_main_groups`, `_helper_groups`), each
        with its reason."""
        group = cls()
        values: dict[str, list[int]] = {name: [] for name in cls.COUNTS}
        for reason, row in rows:
            runs = row["runs"]
            iterations = values_of(row["iteration_values"], int)
            group.runs += runs
            group.cost += row["cost"] or 0.0
            group.iterations += row["iterations_sum"] or 0
            group.elapsed_ms += row["elapsed_sum"] or 0
            values["iteration_counts"] += iterations
            values["elapsed_counts"] += values_of(row["elapsed_values"], int)
            values["cost_counts"] += values_of(row["cost_values"], int)
            if reason in LIMIT_REASONS:
                group.limit_hits += runs
            if reason == COMPLETED:
                values["completed_iterations"] += iterations
                values["completed_tokens"] += values_of(row["token_values"], int)
            elif reason in ITERATION_STOPS:
                group.stopped_at_iterations += runs
            elif reason in TOKEN_STOPS:
                group.stopped_at_tokens += runs
        rounding: dict[str, Callable[[int], int]] = {
            "elapsed_counts": rounded_up,
            "cost_counts": rounded_up,
            "completed_tokens": tokens_rounded_up,
        }
        for name, found in values.items():
            if name in rounding:
                found = list(map(rounding[name], found))
            setattr(group, name, Distribution.of(found))
        return group

    def add(self, other: Group) -> None:
        for name in self.SUMS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in self.COUNTS:
            getattr(self, name).add(getattr(other, name))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: getattr(self, name) for name in self.SUMS}
        for name in self.COUNTS:
            data[name] = getattr(self, name).to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Group:
        group = cls(**{name: data[name] for name in cls.SUMS})
        for name in cls.COUNTS:
            setattr(group, name, Distribution.from_json(data[name]))
        return group


@dataclass
class Hour:
    """One UTC hour: the runs started in it that finished, their cost, how many a limit
    ended; and the runs paused and extended in it."""

    runs: int = 0
    cost: float = 0.0
    ended: int = 0
    paused: int = 0
    extended: int = 0

    def add(self, other: Hour) -> None:
        self.runs += other.runs
        self.cost += other.cost
        self.ended += other.ended
        self.paused += other.paused
        self.extended += other.extended


@dataclass
class ContextCounts:
    """What one model's context window did to the runs: requests shortened to fit it (and
    how many of those summarised older turns), requests the provider refused as too long,
    and runs that ended because a request could not fit even shortened."""

    compacted: int = 0
    summarised: int = 0
    refused: int = 0
    ended: int = 0

    def add(self, other: ContextCounts) -> None:
        self.compacted += other.compacted
        self.summarised += other.summarised
        self.refused += other.refused
        self.ended += other.ended


@dataclass
class Tally:
    """What the finished runs started in a span of time add to the dashboard."""

    skills: dict[str, Group] = field(default_factory=dict)  # the main agent's, by skill
    helpers: dict[str, Group] = field(default_factory=dict)  # by agent type
    reasons: Counter[str] = field(default_factory=Counter)
    owners: dict[int, list[float]] = field(default_factory=dict)  # [cost, runs]
    hours: dict[str, Hour] = field(default_factory=dict)  # "2026-11-20 13"
    ended_by_action: Counter[str] = field(default_factory=Counter)
    stuck: Counter[str] = field(default_factory=Counter)  # runs by stuck pattern
    context: dict[str, ContextCounts] = field(default_factory=dict)  # by model

    def add(self, other: Tally) -> None:
        for mine, theirs in ((self.skills, other.skills), (self.helpers, other.helpers)):
            for name, group in theirs.items():
                mine.setdefault(name, Group()).add(group)
        self.reasons.update(other.reasons)
        for owner, (cost, runs) in other.owners.items():
            totals = self.owners.setdefault(owner, [0.0, 0])
            totals[0] += cost
            totals[1] += runs
        for hour, counts in other.hours.items():
            self.hours.setdefault(hour, Hour()).add(counts)
        self.ended_by_action.update(other.ended_by_action)
        self.stuck.update(other.stuck)
        for model, model_counts in other.context.items():
            self.context.setdefault(model, ContextCounts()).add(model_counts)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "skills": {name: group.to_json() for name, group in self.skills.items()},
            "helpers": {name: group.to_json() for name, group in self.helpers.items()},
            "reasons": dict(self.reasons),
            "owners": {str(owner): totals for owner, totals in self.owners.items()},
            "hours": {hour: list(vars(counts).values()) for hour, counts in self.hours.items()},
            "ended_by_action": dict(self.ended_by_action),
            "stuck": dict(self.stuck),
            "context": {
                model: list(vars(counts).values()) for model, counts in self.context.items()
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tally:
        return cls(
            skills={name: Group.from_json(g) for name, g in data["skills"].items()},
            helpers={name: Group.from_json(g) for name, g in data["helpers"].items()},
            reasons=Counter(data["reasons"]),
            owners={int(owner): list(totals) for owner, totals in data["owners"].items()},
            hours={hour: Hour(*counts) for hour, counts in data["hours"].items()},
            ended_by_action=Counter(data["ended_by_action"]),
            stuck=Counter(data["stuck"]),
            context={model: ContextCounts(*counts) for model, counts in data["context"].items()},
        )
