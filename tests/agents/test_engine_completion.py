"""A normal run: streaming, tools, the final answer, and the event vocabulary."""

from __future__ import annotations

from agents.testing.scripted import Call, Reply


async def test_it_streams_the_answer_and_completes(run):
    outcome = await run([Reply(text=["The answer ", "is ", "42."])])

    assert outcome.reason == "completed"
    assert [e["text"] for e in outcome.events.of_type("assistant.delta")] == [
        "The answer ",
        "is ",
        "42.",
    ]
    assert outcome.result.final_text == "The answer is 42."
    finished = outcome.finished
    assert finished["final_text"] == "The answer is 42."
    assert finished["failure_class"] is None
    assert finished["iterations"] == 1
    assert outcome.notices() == []


async def test_it_runs_a_tool_then_answers_with_its_result(run):
    outcome = await run(
        [
            Reply(calls=[Call("calculator", {"expression": "17*23"})]),
            Reply(text="17 times 23 is 391."),
        ]
    )

    assert outcome.reason == "completed"
    (call,) = outcome.events.of_type("tool.call")
    (result,) = outcome.events.of_type("tool.result")
    assert call["name"] == "calculator" and call["arguments"] == {"expression": "17*23"}
    assert result["id"] == call["id"]
    assert result["ok"] is True and result["content"] == "391"
    # The model's second call saw the tool result.
    second_call_messages = outcome.model.calls[1].messages
    assert second_call_messages[-1] == {
        "role": "tool",
        "tool_call_id": call["id"],
        "content": "391",
    }
    assert outcome.finished["tool_calls"] == 1
    assert outcome.finished["iterations"] == 2


async def test_every_event_has_a_type_and_an_increasing_seq(run):
    outcome = await run(
        [Reply(calls=[Call("lookup", {"topic": "owls"})]), Reply(text=["Owls ", "hoot."])]
    )

    types = outcome.events.types()
    assert types[0] == "run.started"
    assert types[-1] == "run.finished"
    assert types == [
        "run.started",
        "assistant.message",
        "tool.call",
        "tool.result",
        "assistant.delta",
        "assistant.delta",
        "assistant.message",
        "run.finished",
    ]
    seqs = [e["seq"] for e in outcome.events.events]
    assert seqs == list(range(1, len(seqs) + 1))


async def test_usage_and_cost_come_from_the_providers_figures(run):
    outcome = await run([Reply(text="hi", usage=(1_000, 200))], price=(0.000_001, 0.000_002))

    assert outcome.finished["tokens"] == 1_200
    assert outcome.finished["cost_usd"] == 0.0014


async def test_a_tool_that_raises_gives_an_error_result_not_a_crash(run):
    outcome = await run(
        [Reply(calls=[Call("broken", {"topic": "owls"})]), Reply(text="That failed, sorry.")]
    )

    (result,) = outcome.events.of_type("tool.result")
    assert result["ok"] is False
    assert "cannot look up owls" in result["content"]
    assert outcome.reason == "completed"


async def test_bad_tool_arguments_give_the_model_an_error_result(run):
    outcome = await run(
        [
            Reply(
                calls=[
                    Call("calculator", {"expression": 5}),
                    Call("calculator", {}),
                    Call("calculator", {"expression": "1+1", "mode": "fast"}),
                    Call("calculator", "{not json"),
                    Call("telepathy", {"thought": "x"}),
                ]
            ),
            Reply(text="Sorry."),
        ],
        max_consecutive_tool_errors=10,
    )

    contents = [r["content"] for r in outcome.events.of_type("tool.result")]
    assert [r["ok"] for r in outcome.events.of_type("tool.result")] == [False] * 5
    assert "argument expression must be a string" in contents[0]
    assert "missing argument: expression" in contents[1]
    assert "unknown argument(s): mode" in contents[2]
    assert "not JSON" in contents[3]
    assert "no tool named 'telepathy'" in contents[4]
    assert outcome.reason == "completed"
