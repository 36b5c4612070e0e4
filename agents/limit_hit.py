"""A limit reached (or near), with the figures to show and the facts its notice carries
as fields: the pattern a run stuck for no progress repeated, the spending cap a run
ended at."""

from __future__ import annotations

from dataclasses import dataclass

from agents.codes import Metric


def exact(metric: str, value: float) -> int | float:
    """A figure as events carry it: counts as integers, seconds to a tenth, money to a
    millionth of a dollar (a limit of 15 is 15, never 15.0)."""
    if metric == Metric.COST:
        return round(value, 6)
    if metric in (Metric.TIME, Metric.SILENCE):
        seconds = round(float(value), 1)
        return int(seconds) if seconds.is_integer() else seconds
    return round(value)


# How a spending cap's name and note were once joined in a cost hit's `detail`.
CAP_NOTE_SEPARATOR = "; "


@dataclass
class LimitHit:
    """The limit that ended or paused a round (or is near), with the figures to show."""

    metric: str
    value: float
    limit: float
    projected: bool = False  # the next call's estimate, not the spending so far, passes it
    detail: str = ""  # more words on what was counted; a spending cap's note (when it renews)
    pattern: str = ""  # the steps a run repeated ("3 identical calls of search(x) in a row")
    # The spending cap larger than one run a cost hit is at, by name ("the daily spending
    # cap for your account ($2.00)"); "" for the run's own cost limit.
    cap: str = ""

    def __post_init__(self) -> None:
        self.value = exact(self.metric, self.value)
        self.limit = exact(self.metric, self.limit)
        # The older form, where both rode in `detail` ("name; note" for a cap): states
        # saved before these fields were.
        if self.detail and self.metric == Metric.REPEATS and not self.pattern:
            self.pattern, self.detail = self.detail, ""
        elif self.detail and self.metric == Metric.COST and not self.cap:
            self.cap, _, self.detail = self.detail.partition(CAP_NOTE_SEPARATOR)

    def facts(self) -> dict[str, str]:
        """What a notice of this hit carries as fields beyond its figures: the stuck
        pattern and the spending cap, those it has."""
        facts = {"pattern": self.pattern, "cap": self.cap}
        return {name: value for name, value in facts.items() if value}
