"""The live view of a run: the Stop button is there exactly while the run works."""

from __future__ import annotations

import pytest

from chat.run_view import RunView

STOP = 'class="stop" hx-post="/api/runs/r1/cancel/"'


def render(view: RunView, *events: dict[str, object]) -> str:
    return "".join(view.render(event) for event in events)


def test_stop_shows_while_running_goes_at_the_end_and_comes_back_on_continue() -> None:
    view = RunView("r1")

    started = render(view, {"type": "run.started", "seq": 1, "config": {}})
    ended = render(
        view,
        {"type": "system.notice", "seq": 2, "severity": "warning", "text": "Limit.",
         "reason": "max_iterations"},
        {"type": "run.finished", "seq": 3, "reason": "max_iterations"},
    )  # fmt: skip
    continued = render(view, {"type": "run.resumed", "seq": 4, "round": 2})

    assert STOP in started
    assert STOP not in ended and 'hx-post="/api/runs/r1/continue/"' in ended
    assert STOP in continued
    assert 'hx-swap-oob="innerHTML:#run-r1 .system-actions"></div>' in continued  # Continue gone


def test_a_finished_answer_is_read_out_as_written() -> None:
    """Screen readers hear "Tom & Jerry <3", not "Tom &amp; Jerry &lt;3"."""
    view = RunView("r1")
    view.render({"type": "run.started", "seq": 1, "config": {}})
    html = view.render(
        {"type": "assistant.message", "seq": 2, "text": "Tom & Jerry <3", "final": True,
         "tool_calls": []}
    )  # fmt: skip

    announced = html[html.index("#announcer") :]
    assert "Tom &amp; Jerry &lt;3" in announced
    assert "&amp;amp;" not in announced


@pytest.mark.parametrize(
    ("not_run", "shown"),
    [("stopped", "stopped"), ("budget", "not run"), ("declined", "declined"),
     ("unanswered", "not answered")],
)  # fmt: skip
def test_a_tool_that_did_not_run_says_why_and_is_not_shown_as_an_error(
    not_run: str, shown: str
) -> None:
    view = RunView("r1")
    view.render({"type": "run.started", "seq": 1, "config": {}})
    view.render({"type": "tool.call", "seq": 2, "id": "c1", "name": "fetch", "arguments": {}})

    html = view.render({"type": "tool.result", "seq": 3, "id": "c1", "name": "fetch",
                        "ok": False, "content": "Not run.", "not_run": not_run})  # fmt: skip

    assert f'<span class="tool-status not-run">{shown}</span>' in html
    assert "tool-status failed" not in html and ">error<" not in html


def test_tools_asked_for_on_the_last_call_of_an_iteration_limit_badge_that_limit() -> None:
    view = RunView("r1")
    view.render({"type": "run.started", "seq": 1, "config": {}})
    view.render({"type": "assistant.message", "seq": 2, "text": "I reached the limit.",
                 "final": True, "tool_calls": []})  # fmt: skip

    html = view.render({"type": "run.finished", "seq": 3, "reason": "tool_budget_violation",
                        "metric": "iterations"})  # fmt: skip

    assert ">Iteration limit<" in html and "Tool-call budget" not in html
    other = RunView("r2")
    other.render({"type": "run.started", "seq": 1, "config": {}})
    other.render({"type": "assistant.message", "seq": 2, "text": "Out of calls.",
                  "final": True, "tool_calls": []})  # fmt: skip
    spent = other.render({"type": "run.finished", "seq": 3, "reason": "tool_budget_violation",
                          "metric": "tool_calls"})  # fmt: skip
    assert ">Tool-call budget<" in spent
