"""A System message that lands while an answer streams does not split the answer: its
words stay in one bubble, and the finished answer fills that bubble, not a second one."""

from __future__ import annotations

import re

from chat.run_view import RunView

WARNING = {"severity": "warning", "metric": "time", "value": 90, "limit": 120,
           "text": "Approaching the time limit (90 of 120 s)."}  # fmt: skip


def test_a_notice_between_an_answers_words_and_its_end_draws_no_second_bubble() -> None:
    view = RunView("r1")
    events = [
        {"type": "run.started", "seq": 1, "config": {}},
        {"type": "assistant.delta", "seq": 2, "text": "The answer "},
        {"type": "system.notice", "seq": 3, **WARNING},
        {"type": "assistant.delta", "seq": 4, "text": "is 42."},
        {"type": "assistant.message", "seq": 5, "text": "The answer is 42.", "final": True,
         "tool_calls": []},
    ]  # fmt: skip

    html = "".join(view.render(event) for event in events)

    assert len(re.findall(r'<article class="msg msg-assistant"', html)) == 1
    assert html.count("The answer is 42.") <= 2  # the bubble, and what a screen reader hears
    assert view.final_bubble is not None and view.final_bubble.endswith("-a2")
