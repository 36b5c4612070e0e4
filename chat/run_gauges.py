"""A live run's gauges: what its round used against its limits, and the latest call's
prompt against the model's window; and what changed in them since they were last sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chat.gauges import STREAMED_TOKENS_STEP, gauge, gauge_counters, gauge_rows
from chat.partials import render_partial


@dataclass
class RunGauges:
    """The figures a run's events give its gauges (`chat.run_view.RunView` keeps one)."""

    limits: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, Any] = field(default_factory=dict)
    round_number: int = 1
    before_round: dict[str, Any] = field(default_factory=dict)  # the totals it began with
    context: dict[str, int] = field(default_factory=dict)  # the latest call's prompt, window
    _frame: tuple[Any, ...] = ()
    _used: dict[str, Any] = field(default_factory=dict)
    _shown: dict[str, tuple[str, int]] = field(default_factory=dict)

    def round_used(self, streamed_chars: int = 0) -> dict[str, Any]:
        """What this round used so far: the totals less those it began with, and the
        tokens of the answer streaming now (`streamed_chars`), estimated (counted when
        its call ends)."""
        totals = self.counters or gauge_counters({})
        used = {key: value - self.before_round.get(key, 0) for key, value in totals.items()}
        used["cost_usd"] = round(used["cost_usd"], 6)
        used["tokens"] += streamed_chars // 4 // STREAMED_TOKENS_STEP * STREAMED_TOKENS_STEP
        return used

    def if_changed(self, status: str, streamed_chars: int, *, always: bool = False) -> str:
        """What changed since the last gauges sent: nothing (most batches are a few words
        of text, which move no counter), the gauges that moved, or the whole (a new
        status, round or limits, or the context gauge appearing: a window is known now)."""
        windowed = bool(self.context.get("window"))
        frame = (status, self.round_number, tuple(self.limits.items()), windowed)
        used = {**self.round_used(streamed_chars), "context": tuple(self.context.values())}
        if not always and frame == self._frame and used == self._used:
            return ""  # the common case, checked before any gauge is drawn
        self._used = used
        rows = gauge_rows(used, self.limits, status=status, context=self.context)
        shown = {row["key"]: (row["shown"], row["percent"]) for row in rows}
        if always or frame != self._frame:
            self._frame, self._shown = frame, shown
            context = {"status": status, "round": self.round_number, "swap_oob": True}
            return render_partial("_gauges.html", gauges=rows, **context)
        moved = [row for row in rows if shown[row["key"]] != self._shown.get(row["key"])]
        self._shown = shown
        return "".join(gauge(row) for row in moved)
