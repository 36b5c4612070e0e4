"""Asking the model (agents/run/model_step.py): one call streamed, retried, counted and
kept in the history, its tool calls handed on."""

from __future__ import annotations

from agents import wording
from agents.model import ModelError, ModelProblem
from agents.run.calling import Streamed, record_usage
from agents.run.model_step import request_model
from agents.state import Metric
from agents.testing.scripted import Call, Reply

from .step_run import ready_run


async def test_the_answer_streams_as_it_comes_and_joins_the_history():
    step = ready_run([Reply(text=["The answer ", "is 42."], usage=(30, 6))])

    calls = await request_model(step.run)

    assert calls == []
    assert step.texts("assistant.delta") == ["The answer ", "is 42."]
    assert step.state.messages[-1] == {"role": "assistant", "content": "The answer is 42."}
    assert step.run.unemitted_text == "The answer is 42."  # for the ending to show
    assert (step.state.round.iterations, step.state.round.tokens) == (1, 36)


async def test_tool_calls_are_shown_and_saved_before_they_run():
    step = ready_run([Reply(text="Let me look.", calls=[Call("lookup", {"topic": "owls"})])])

    calls = await request_model(step.run)

    assert [call.name for call in calls] == ["lookup"]
    (message,) = step.events.of_type("assistant.message")
    assert message["text"] == "Let me look."
    assert message["tool_calls"] == [{"id": calls[0].id, "name": "lookup",
                                      "arguments": {"topic": "owls"}}]  # fmt: skip
    assert message["final"] is False
    assert step.events.of_type("tool.result") == []
    (saved,) = step.saved  # a lost worker resumes by running the calls, not asking again
    assert saved.messages[-1]["tool_calls"][0]["function"]["name"] == "lookup"


async def test_tools_asked_for_while_winding_down_are_not_run():
    step = ready_run([Reply(text="Here is my summary.", calls=[Call("lookup", {"topic": "x"})])])
    step.state.wind_down_reason = Metric.ITERATIONS

    calls = await request_model(step.run)

    assert calls == []
    assert step.model.calls[0].tools is None  # the model was offered no tools
    assert step.state.messages[-1] == {"role": "assistant", "content": "Here is my summary."}


async def test_a_passing_provider_failure_is_retried_and_the_answer_kept():
    failure = ModelError(
        "502 from upstream", kind=ModelProblem.PROVIDER_FAILED, status=502, retry_after=0.01
    )
    step = ready_run([Reply(error=failure), Reply(text="Recovered.")])

    await request_model(step.run)

    assert len(step.model.calls) == 2
    assert step.state.provider_failure is None
    assert step.state.messages[-1]["content"] == "Recovered."


async def test_a_refused_key_is_not_retried_and_ends_with_its_kind():
    refused = ModelError("invalid api key", kind=ModelProblem.AUTH, status=401)
    step = ready_run([Reply(error=refused), Reply(text="never")])

    calls = await request_model(step.run)

    assert calls == []
    assert len(step.model.calls) == 1
    failure = step.state.provider_failure
    assert failure is not None
    assert (failure.kind, failure.status, failure.model) == (
        ModelProblem.AUTH,
        401,
        "scripted/test",
    )
    hit = step.state.limit_hit
    assert hit is not None
    assert (hit.metric, hit.value, hit.limit) == (Metric.ATTEMPTS, 1, 4)
    assert step.state.last_response is not None and step.state.last_response.interrupted


async def test_the_token_budget_stops_the_answer_mid_stream_keeping_the_chunk_that_crossed_it():
    step = ready_run([Reply(text=["a" * 40, "b" * 400, "c" * 40])])
    assert step.state.call_limits is not None
    step.state.call_limits.tokens = step.state.estimated_prompt_tokens + 50

    await request_model(step.run)

    assert step.texts("assistant.delta") == ["a" * 40, "b" * 400]
    assert step.state.last_response is not None and step.state.last_response.interrupted
    assert step.run.unemitted_text == "a" * 40 + "b" * 400


async def test_an_answer_cut_off_by_the_output_limit_is_asked_to_go_on_and_joins_the_same_answer():
    step = ready_run(
        [Reply(text="The first half", finish_reason="length"), Reply(text=", then the rest.")]
    )

    await request_model(step.run)

    assert step.state.pending_hints == [wording.CUT_OFF_HINT]
    await request_model(step.run)
    assert step.model.calls[1].messages[-1] == {"role": "system", "content": wording.CUT_OFF_HINT}
    assert step.run.unemitted_text == "The first half, then the rest."


def test_a_call_cut_short_without_figures_is_counted_from_what_streamed():
    step = ready_run(price=(0.001, 0.002))
    step.state.estimated_prompt_tokens = 100
    streamed = Streamed(text_parts=["x" * 41], streamed_chars=41, interrupted=True)

    record_usage(step.run, streamed)

    assert (step.state.round.prompt_tokens, step.state.round.completion_tokens) == (100, 11)
    assert step.state.round.cost_usd == 100 * 0.001 + 11 * 0.002


def test_a_call_cut_short_before_anything_came_costs_nothing():
    step = ready_run(price=(0.001, 0.002))
    step.state.estimated_prompt_tokens = 100

    record_usage(step.run, Streamed(interrupted=True))

    assert (step.state.round.tokens, step.state.round.cost_usd) == (0, 0.0)
