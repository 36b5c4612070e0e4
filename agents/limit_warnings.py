"""What a run is told as a limit nears or passes: the System message and the model's hint.

The decision tree decides when a warning is due and what happens at the limit
(`then`: an extension, a pause, or '' when the run wraps up); these functions queue
the warning in the state, once per round and quantity.
"""

from __future__ import annotations

from agents import wording
from agents.measures import Measure, warning_threshold
from agents.state import AgentState, LimitHit, Notice


def warning(state: AgentState, measure: Measure, value: float, then: str) -> tuple[Notice, str]:
    """The System message of a soft warning, and the model's hint ('' for none: the
    limit will be extended or pause the run, or the wind-down instruction says more)."""
    limit = measure.shown_limit
    if value < warning_threshold(measure) <= measure.projected:
        # Warned on the next call's estimate (tokens, cost): the text says so. The
        # figures stay what is used so far, unless nothing is: never "0 of" a limit.
        text = _estimate_notice(
            measure.metric, value, measure.projected, limit, round_number=state.rounds,
            then=then,
        )  # fmt: skip
        value = value or measure.projected
    else:
        text = wording.approaching_notice(
            measure.metric, value, limit, round_number=state.rounds, then=then
        )
    hit = LimitHit(measure.metric, value, limit)
    notice = Notice("warning", text, hit.metric, hit.value, hit.limit)
    wrap_up = not then and state.wind_down_reason is None
    return notice, wording.approaching_hint(measure.metric, value, limit) if wrap_up else ""


def give_warning(
    state: AgentState, measure: Measure, value: float, then: str, *, reached: bool = False
) -> None:
    """Queue the soft warning of `measure` at `value` (`reached`: said as a limit
    already reached), unless this round was warned about it already."""
    if measure.metric in state.warnings_given:
        return  # once per round and quantity
    state.warnings_given.append(measure.metric)
    notice, hint = warning(state, measure, value, then)
    if reached:
        notice.text = wording.reached_notice(measure.metric, value, measure.shown_limit)
    state.pending_notices.append(notice)
    if hint:
        state.pending_hints.append(hint)


def warn_past_limit(state: AgentState, measure: Measure) -> None:
    """Under the warn action, queue the notice that a quantity went past the limit the
    user set (once per round and quantity); the run goes on to the operator's cap."""
    if measure.value < measure.shown_limit:
        return
    key = f"{measure.metric}:limit"
    if key in state.warnings_given:
        return
    state.warnings_given.append(key)
    text = wording.warn_notice(
        measure.metric, measure.value, measure.shown_limit, measure.hard_limit
    )
    hit = LimitHit(measure.metric, measure.value, measure.shown_limit)
    state.pending_notices.append(Notice("warning", text, hit.metric, hit.value, hit.limit))


def _estimate_notice(
    metric: str,
    value: float,
    projected: float,
    limit: float,
    *,
    round_number: int = 1,
    then: str = "",
) -> str:
    """The soft warning given on the next call's estimate (tokens, cost): what the
    next call may bring the run to, never "0 of" a limit nothing has used yet."""
    what = f"the {wording.limit_name(metric)}{wording.of_round(round_number)}"
    about = "the next call may take it to about"
    if value:
        used = wording.figures(metric, value, limit)
        shown = f"{used} so far; {about} {wording.number(metric, projected)}"
    else:
        shown = f"{about} {wording.figures(metric, projected, limit)}"
    return f"Approaching {what} ({shown}). " + (then or "The Oracle has been asked to wrap up.")
