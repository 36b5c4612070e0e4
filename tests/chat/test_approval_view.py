"""The live view of a run that waits for approval, of an MCP tool's progress and of the
pictures a tool gives: what the chat shows, built from the run's events."""

from __future__ import annotations

import base64

from chat.run_view import RunView
from chat.tool_steps import pictures, tool_progress

PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n pretend").decode()


def render(view: RunView, *events: dict[str, object]) -> str:
    return "".join(view.render(event) for event in events)


def waiting_run(view: RunView, *calls: tuple[str, str]) -> str:
    events: list[dict[str, object]] = [{"type": "run.started", "seq": 1, "config": {}}]
    for call_id, name in calls:
        events.append({"type": "tool.call", "seq": len(events) + 1, "id": call_id,
                       "name": name, "arguments": {"text": "ship it"}})  # fmt: skip
    for call_id, name in calls:
        events.append({"type": "tool.approval_requested", "seq": len(events) + 1,
                       "id": call_id, "name": name, "server": "testing"})  # fmt: skip
    events.append({"type": "system.notice", "seq": len(events) + 1, "severity": "warning",
                   "text": "Needs your approval.", "reason": "approval"})  # fmt: skip
    events.append({"type": "run.paused", "seq": len(events) + 1, "reason": "approval"})
    return render(view, *events)


def test_a_call_waiting_for_approval_offers_approve_always_and_deny_not_continue() -> None:
    html = waiting_run(RunView("r1"), ("c1", "testing__echo"))

    assert "waits for your approval" in html
    assert 'hx-post="/api/runs/r1/approve/"' in html
    assert 'hx-post="/api/runs/r1/deny/"' in html
    assert '"call_id": "c1"' in html
    assert '"always": "true"' in html
    assert "Always allow here" in html
    assert 'hx-post="/api/runs/r1/cancel/"' in html  # Stop
    assert "/continue/" not in html  # Continue would be refused while the call waits


def test_two_waiting_calls_get_a_row_each() -> None:
    html = waiting_run(RunView("r1"), ("c1", "testing__echo"), ("c2", "files__delete"))

    assert html.count('class="approval"') == 2
    assert '"call_id": "c2"' in html and "files__delete" in html


def test_a_call_id_cannot_break_out_of_the_buttons_values() -> None:
    html = waiting_run(RunView("r1"), ('x"}, "always": "true', "testing__echo"))

    assert '"call_id": "x\\u0022}, \\u0022always\\u0022: \\u0022true"' in html


def test_an_answer_puts_the_step_back_to_running_and_the_next_round_clears_buttons() -> None:
    view = RunView("r1")
    waiting_run(view, ("c1", "testing__echo"))

    answered = render(
        view,
        {"type": "tool.approval_given", "seq": 10, "id": "c1", "name": "testing__echo",
         "approved": True},
        {"type": "run.resumed", "seq": 11, "round": 1},
    )  # fmt: skip

    assert "running…" in answered and "waits for your approval" not in answered
    assert 'hx-swap-oob="innerHTML:#run-r1 .system-actions"></div>' in answered
    assert view.awaiting == []


def test_progress_shows_on_the_running_step_escaped() -> None:
    view = RunView("r1")
    render(view, {"type": "tool.call", "seq": 1, "id": "c1", "name": "t__sleep",
                  "arguments": {}})  # fmt: skip

    html = view.render({"type": "tool.progress", "seq": 2, "id": "c1", "progress": 3,
                        "total": 10, "message": "<b>copying</b>"})  # fmt: skip

    assert "#run-r1-tc1-progress" in html
    assert "3 of 10: &lt;b&gt;copying&lt;/b&gt;" in html


def test_progress_without_a_total_or_message() -> None:
    assert tool_progress(2.5, None, None) == "2.5"
    assert tool_progress(1, 0, "") == "1"
    assert tool_progress(None, None, "warming up") == "warming up"
    assert len(tool_progress(1, 2, "x" * 1000)) == 200


def test_a_tool_result_shows_its_pictures() -> None:
    view = RunView("r1")
    render(view, {"type": "tool.call", "seq": 1, "id": "c1", "name": "t__picture",
                  "arguments": {}})  # fmt: skip

    html = view.render(
        {"type": "tool.result", "seq": 2, "id": "c1", "name": "t__picture", "ok": True,
         "content": "a red pixel",
         "attachments": [{"type": "image", "mime_type": "image/png", "data": PIXEL}]}
    )  # fmt: skip

    assert f'<img class="tool-picture" src="data:image/png;base64,{PIXEL}"' in html
    assert 'alt="A picture from t__picture"' in html


def test_only_safe_picture_kinds_with_base64_data_are_shown() -> None:
    shown = pictures(
        [
            {"type": "image", "mime_type": "image/svg+xml", "data": PIXEL},  # may run script
            {"type": "image", "mime_type": "image/png", "data": 'AAAA" onerror="alert(1)'},
            {"type": "image", "mime_type": "text/html", "data": PIXEL},
            {"type": "audio", "mime_type": "image/png", "data": PIXEL},
            "not a dict",
            {"type": "image", "mime_type": "image/webp", "data": PIXEL},
        ],
        "t",
    )

    assert [picture["src"] for picture in shown] == [f"data:image/webp;base64,{PIXEL}"]
    assert pictures("not a list", "t") == []
