"""The context window, per model: in the period's finished runs, the requests shortened to
fit the model's window (and how many of those summarised older turns), the requests the
provider refused as too long, and the runs that ended because a request could not fit
even shortened (`context_window`), the most affected model first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.state import TerminationReason
from dashboard.filters import run_list_url
from dashboard.periods import Period
from dashboard.tally import ContextCounts

UNKNOWN_MODEL = "(not recorded)"


@dataclass(frozen=True)
class ContextRow:
    model: str
    compacted: int
    summarised: int
    refused: int
    ended: int
    compacted_href: str  # the runs behind each figure ("" for a model not recorded)
    refused_href: str
    ended_href: str


def context_rows(period: Period, models: Mapping[str, ContextCounts]) -> list[ContextRow]:
    """A row for each model the context window touched, the most affected first."""
    rows = [
        _context_row(period, model, counts)
        for model, counts in models.items()
        if counts.compacted or counts.refused or counts.ended
    ]
    return sorted(rows, key=lambda row: (-row.ended, -row.refused, -row.compacted, row.model))


def _context_row(period: Period, model: str, counts: ContextCounts) -> ContextRow:
    def runs(**filters: str) -> str:
        return run_list_url(period, model=model, **filters) if model else ""

    return ContextRow(
        model=model or UNKNOWN_MODEL,
        compacted=counts.compacted,
        summarised=counts.summarised,
        refused=counts.refused,
        ended=counts.ended,
        compacted_href=runs(event="compacted"),
        refused_href=runs(event="refused"),
        ended_href=runs(reason=TerminationReason.CONTEXT_WINDOW),
    )


def ended_href(period: Period) -> str:
    """The period's runs that ended at the context window, whatever their model."""
    return run_list_url(period, reason=TerminationReason.CONTEXT_WINDOW)
