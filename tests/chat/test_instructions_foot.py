"""An answer whose run worked under the user's custom instructions says so in its foot,
with the instructions behind a disclosure; the live view and the saved page alike."""

from __future__ import annotations

from chat.fragments import assistant_message_context
from chat.partials import render_partial
from chat.run_view import RunView

INSTRUCTIONS = "Answer in <b>French</b> & be brief."


def finish(view: RunView, **extra: object) -> str:
    view.render({"type": "run.started", "seq": 1, "config": {}})
    view.render(
        {"type": "assistant.message", "seq": 2, "text": "Bonjour.", "final": True,
         "tool_calls": []}
    )  # fmt: skip
    return view.render({"type": "run.finished", "seq": 3, "reason": "completed", **extra})


def test_the_live_foot_says_the_run_used_the_users_instructions() -> None:
    html = finish(RunView("r1"), instructions=INSTRUCTIONS)

    assert '<details class="instructions-used">' in html
    assert "With your instructions" in html
    assert "Answer in &lt;b&gt;French&lt;/b&gt; &amp; be brief." in html  # shown as written


def test_a_run_without_instructions_says_nothing_of_them() -> None:
    html = finish(RunView("r1"))

    assert "instructions-used" not in html
    assert "With your instructions" not in html


def test_a_saved_answer_says_so_too() -> None:
    answer = assistant_message_context(
        "msg-7", "Bonjour.", "completed", {}, instructions=INSTRUCTIONS
    )

    html = render_partial("_answer.html", answer=answer)

    assert "With your instructions" in html
    assert "Answer in &lt;b&gt;French&lt;/b&gt; &amp; be brief." in html
