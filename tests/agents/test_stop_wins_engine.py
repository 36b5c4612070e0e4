"""Stop always wins (SPEC 6a), in the engine: a run stopped before its approved calls
begin runs none of them; and a wait on the user that expired ends the run
`pause_expired`, its calls shown as expired, never run."""

from __future__ import annotations

from agents.cancel import CancelToken
from agents.events import EventCollector
from agents.loop import answer_approval, stop_paused_run
from agents.state import AgentState, RunStatus, TerminationReason
from tests.agents.test_engine_approval import RAN, paused_run
from tests.agents.test_engine_limit_actions import LOOKUP_FOREVER


async def test_an_approved_call_of_a_run_stopped_before_it_went_on_never_runs():
    state, run_deps, _ = await paused_run()
    state.approvals[state.awaiting_approval[0]["id"]] = True
    stopped = CancelToken()
    stopped.cancel()  # the Stop came with the Approve
    events = EventCollector()

    result = await answer_approval(state, run_deps, on_event=events, cancel=stopped)

    assert RAN == []
    assert result.reason is TerminationReason.CANCELLED
    (closed,) = events.of_type("tool.result")
    assert (closed["ok"], closed["not_run"]) == (False, "stopped")
    assert closed["content"] == "Not run: the run stopped first."
    assert len(run_deps.model.calls) == 1  # the model was not asked again


async def test_an_approval_that_waited_too_long_ends_the_run_and_shows_as_expired():
    state, run_deps, _ = await paused_run()
    events = EventCollector()

    result = await stop_paused_run(state, run_deps, on_event=events, expired=True)

    assert RAN == []
    assert result.reason is TerminationReason.PAUSE_EXPIRED
    (closed,) = events.of_type("tool.result")
    assert (closed["ok"], closed["not_run"]) == (False, "expired")
    assert closed["content"] == "Not run: the approval expired before you answered."
    (notice,) = events.of_type("system.notice")
    assert notice["reason"] == "pause_expired"
    assert notice["text"].startswith("The wait for your answer expired. Press Continue")
    assert events.of_type("run.finished")[0]["reason"] == "pause_expired"
    assert result.final_text.startswith("Stopped: the run waited too long for your answer.")
    # The history a Continue sends answers the call the model made.
    told = [m for m in result.state.messages if m.get("role") == "tool"]
    assert told[-1]["content"] == closed["content"]


async def test_a_limits_pause_that_waited_too_long_ends_pause_expired(run):
    outcome = await run(LOOKUP_FOREVER, max_iterations=3, limit_action="pause")
    state = AgentState.from_json(outcome.result.state.to_json())
    events = EventCollector()

    result = await stop_paused_run(state, outcome.deps, on_event=events, expired=True)

    assert result.status is RunStatus.FINISHED
    assert result.reason is TerminationReason.PAUSE_EXPIRED
    assert events.of_type("run.finished")[0]["reason"] == "pause_expired"
