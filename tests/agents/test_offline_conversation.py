"""What the offline model reads from the conversation: the latest question, the tool
calls made for it, and whether it already said how to configure a model."""

from __future__ import annotations

import json
from typing import Any

from agents.offline_conversation import (
    Step,
    last_user_text,
    next_call,
    said_before,
    steps_since_question,
)


def asked(call_id: str, name: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [_wire(call_id, name)]}


def answered(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _wire(call_id: str, name: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_only_the_steps_for_the_latest_question_count() -> None:
    messages = [
        {"role": "user", "content": "what is 2+2"},
        asked("1", "calculator"),
        answered("1", "4"),
        {"role": "assistant", "content": "2+2 = 4."},
        {"role": "user", "content": "and 3*3?"},
        asked("2", "calculator"),
        answered("2", "9"),
    ]
    assert last_user_text(messages) == "and 3*3?"
    assert steps_since_question(messages) == [Step("calculator", "9")]


def test_a_call_whose_result_never_came_counts_as_failed() -> None:
    messages = [{"role": "user", "content": "what time is it"}, asked("1", "current_time")]
    [step] = steps_since_question(messages)
    assert step.result is None and step.failed
    assert Step("calculator", "Error: division by zero").failed
    assert not Step("calculator", "4").failed


def test_a_new_call_never_reuses_an_earlier_calls_id() -> None:
    messages = [
        {"role": "user", "content": "q"},
        asked("offline_call_1", "search_documents"),
        answered("offline_call_1", "{}"),
        asked("offline_call_2", "read_document"),
    ]
    call_id, name, arguments = next_call(messages, "calculator", {"expression": "1+1"})
    assert (call_id, name, json.loads(arguments)) == (
        "offline_call_3",
        "calculator",
        {"expression": "1+1"},
    )


def test_only_an_earlier_answer_counts_as_said() -> None:
    messages = [{"role": "user", "content": "configure a model"}]
    assert not said_before(messages, "configure a model")
    messages.append({"role": "assistant", "content": "I can't. Please configure a model."})
    assert said_before(messages, "configure a model")


def test_with_no_question_there_is_nothing_to_answer() -> None:
    assert last_user_text([{"role": "system", "content": "You are the Oracle."}]) == ""
