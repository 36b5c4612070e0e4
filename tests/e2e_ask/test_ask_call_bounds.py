"""`manage.py ask` with the operator's bounds on one call and on a run's helpers: a call
with 100,000 characters of arguments is refused before it runs, and the run answers."""

from __future__ import annotations

# 100,001 characters of arithmetic, streamed 10,000 characters a chunk.
LONG_SUM = {"expression": "1+" * 50_000 + "1"}
LONG_CALL = {
    "tool_calls": [{"name": "calculator", "arguments": LONG_SUM}],
    "argument_pieces": 10_000,
    "chunk_delay": 0.02,
}
ANSWER = {"text": ["That sum was too long to send; ", "it comes to 50,001."]}


def test_a_call_with_100000_characters_of_arguments_is_refused_and_the_run_answers(ask, server):
    server.set_script([LONG_CALL, ANSWER])

    run = ask("Add fifty thousand and one ones", "--json", server=server)

    assert run.returncode == 0, run.stderr
    (result,) = run.of_type("tool.result")
    assert result["ok"] is False
    assert "over the limit of 65,536 bytes a tool call may send" in result["content"]
    (refused,) = run.of_type("tool.refused")
    assert (refused["reason"], refused["name"], refused["limit"]) == (
        "arguments_too_large", "calculator", 65_536,
    )  # fmt: skip
    # Reading stopped at the chunk that passed the limit: 70,000 of the 100,000 came.
    assert 65_536 < refused["value"] <= 70_000 + len('{"expression": "')
    assert server.sent[0] < 14  # not all: the stream was left before its end
    # The model read the refusal and answered.
    assert "over the limit of 65,536 bytes" in server.requests[1]["messages"][-1]["content"]
    assert run.finished["reason"] == "completed"
    assert run.finished["final_text"] == "That sum was too long to send; it comes to 50,001."


def test_the_operators_limit_reaches_the_run(ask, server):
    server.set_script([LONG_CALL, ANSWER])

    run = ask("Add them", "--json", server=server, ORACLE_TOOL_ARGUMENTS_MAX_BYTES="200000")

    assert run.returncode == 0, run.stderr
    (result,) = run.of_type("tool.result")
    assert "over the limit" not in result["content"]  # the calculator had it, whole
    assert run.of_type("tool.refused") == []
    assert server.sent[0] == 14  # every chunk read: role, eleven pieces, finish, usage
    assert run.finished["reason"] == "completed"
