"""A provider's failure is told in plain words, by kind, with what was counted; its own
words (LiteLLM's exception, the JSON body) are kept for the log and staff only."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from agents.clock import Clock
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, RunResult, start_run
from agents.state import AgentState
from agents.testing.fake_server import FakeServer
from agents.tree import DefaultDecisionTree

CONTEXT_TOO_LONG = (
    "This model's maximum context length is 4096 tokens. However, you requested 5000 "
    "tokens in the messages, Please reduce the length of the messages."
)


@pytest.fixture
def server():
    with FakeServer() as fake:
        yield fake


async def ask(api_base: str, *, request_timeout: float = 600.0) -> tuple[RunResult, EventCollector]:
    from agents.litellm_model import LiteLLMModel

    deps = RunDeps(
        model=LiteLLMModel(
            "openai/fake-model", api_base=api_base, api_key="k", request_timeout=request_timeout
        ),
        tree=DefaultDecisionTree(AgentConfig.from_raw({})),
        clock=Clock(),
        retry_base_delay=0.01,
    )
    events = EventCollector()
    result = await start_run("Hello?", deps, on_event=events)
    return result, events


def ending(events: EventCollector) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's last System message and its `run.finished`."""
    return events.of_type("system.notice")[-1], events.of_type("run.finished")[-1]


def assert_plain(text: str) -> None:
    """No trace of the provider's own words in what the user reads."""
    for raw in ("litellm", "Exception", "Error", "{", "Hosted_vllm", "scripted"):
        assert raw not in text


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_lasting_server_error_says_the_provider_failed_with_its_status(server):
    server.set_script([{"status": 500}], repeat_last=True)

    result, events = await ask(server.base_url)

    notice, finished = ending(events)
    assert notice["text"] == (
        "The model provider failed (500) on 4 of 4 attempts. Press Continue to try again."
    )
    assert result.final_text.startswith("Stopped: the model provider failed.")
    assert (notice["problem"], finished["problem"]) == ("provider_failed", "provider_failed")
    assert finished["failure_class"] == "transient_infra"
    assert result.state.provider_failure.kind.transient
    assert len(server.requests) == 4
    assert "InternalServerError" in notice["detail"]  # for staff, not shown
    assert_plain(notice["text"])
    assert_plain(result.final_text)


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refused_key_is_not_retried_and_points_to_the_settings(server, status):
    body = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
    server.set_script([{"status": status, "body": body}])

    result, events = await ask(server.base_url)

    notice, finished = ending(events)
    assert notice["text"] == (
        f"The provider refused the API key ({status}). "
        "Check the key in the server's settings or pick another model."
    )
    assert result.final_text.startswith("Stopped: the provider refused the API key.")
    assert (notice["metric"], notice["value"], notice["limit"]) == ("attempts", 1, 4)
    assert (notice["problem"], finished["problem"]) == ("auth", "auth")
    assert finished["failure_class"] == "deterministic"
    assert not result.state.provider_failure.kind.transient
    assert len(server.requests) == 1
    assert "Incorrect API key provided" in notice["detail"]
    assert_plain(notice["text"])


async def test_an_unknown_model_names_the_model_and_points_to_the_settings(server):
    body = {"error": {"message": "The model `fake-model` does not exist", "code": 404}}
    server.set_script([{"status": 404, "body": body}])

    result, events = await ask(server.base_url)

    notice, finished = ending(events)
    assert notice["text"] == (
        "The provider does not know the model `openai/fake-model` (404). "
        "Pick another model in Settings."
    )
    assert result.final_text.startswith(
        "Stopped: the provider does not know the model `openai/fake-model`."
    )
    assert finished["problem"] == "unknown_model"
    assert finished["failure_class"] == "deterministic"
    assert len(server.requests) == 1
    assert_plain(notice["text"])


@pytest.mark.parametrize(
    "response",
    [
        {"status": 400, "body": {"object": "error", "message": CONTEXT_TOO_LONG, "code": 400}},
        # vLLM's error event in the stream, read by LiteLLM's own parser.
        {"text": "lost", "error_after": 1, "error": {"message": CONTEXT_TOO_LONG, "code": 400}},
    ],
    ids=["status", "error-event"],
)
async def test_a_context_too_long_is_shortened_and_sent_once_more_then_ends_at_the_window(
    server, response
):
    # The provider refuses even the shortened request: the run does not loop, and it is
    # no provider error (nothing to retry, no outage): it ends at the window, saying so.
    server.set_script([response, response])

    result, events = await ask(server.base_url)

    notice, finished = ending(events)
    assert notice["text"] == (
        "The request does not fit the model's 4,096-token context, even shortened: the "
        "provider refused the shortened request too. Shorten your message or split it into "
        "parts, attach a long text as a document (the Oracle reads documents in parts), or "
        "pick a model with a larger context."
    )
    assert result.final_text.startswith(
        "Stopped: the request does not fit the model's 4,096-token context"
    )
    assert finished["reason"] == "context_window"
    assert finished["problem"] is None
    assert finished["failure_class"] == "deterministic"
    assert len(server.requests) == 2
    assert [e["window"] for e in events.of_type("context.refused")] == [4096]
    assert_plain(notice["text"])


async def test_another_rejected_request_says_the_provider_rejected_it(server):
    server.set_script([{"status": 400, "body": {"error": {"message": "unknown field 'x'"}}}])

    result, events = await ask(server.base_url)

    notice, finished = ending(events)
    assert notice["text"] == (
        "The provider rejected the request (400). Pick another model in Settings."
    )
    assert finished["problem"] == "bad_request"
    assert not result.state.provider_failure.kind.transient
    assert len(server.requests) == 1


async def test_a_lasting_rate_limit_says_so_with_the_attempts(server):
    server.set_script([{"status": 429, "headers": {"Retry-After": "0"}}], repeat_last=True)

    result, events = await ask(server.base_url)

    notice, finished = ending(events)
    assert notice["text"] == (
        "The model provider turned the calls away as too many (429) on 4 of 4 attempts. "
        "Wait a little, then press Continue to try again."
    )
    assert finished["problem"] == "rate_limited"
    assert finished["failure_class"] == "transient_infra"
    assert result.state.provider_failure.kind.transient
    assert len(server.requests) == 4
    assert_plain(notice["text"])


async def test_a_provider_that_cannot_be_reached_says_so_with_the_attempts():
    result, events = await ask(f"http://127.0.0.1:{closed_port()}/v1")

    notice, finished = ending(events)
    assert notice["text"] == (
        "The connection to the model provider failed on 4 of 4 attempts. "
        "Press Continue to try again."
    )
    assert finished["problem"] == "unreachable"
    assert finished["failure_class"] == "transient_infra"
    assert result.state.provider_failure.kind.transient
    assert "connection" in notice["detail"].lower()
    assert_plain(notice["text"])


async def test_a_provider_that_does_not_answer_in_time_counts_as_unreachable(server):
    server.set_script([{"delay": 5, "text": "late"}], repeat_last=True)

    _, events = await ask(server.base_url, request_timeout=0.2)

    notice, finished = ending(events)
    assert finished["problem"] == "unreachable"
    assert "on 4 of 4 attempts" in notice["text"]
    assert_plain(notice["text"])


async def test_a_saved_state_keeps_the_failure(server):
    server.set_script([{"status": 404}])
    result, _ = await ask(server.base_url)

    again = AgentState.from_json(result.state.to_json())

    assert again.provider_failure == result.state.provider_failure
    assert again.provider_failure.kind.value == "unknown_model"


def test_a_state_saved_before_failures_had_a_kind_still_loads():
    saved = json.loads(AgentState(run_id="r1").to_json())
    del saved["provider_failure"]
    saved.update(provider_error="InternalServerError: litellm...", provider_error_transient=True)

    state = AgentState.from_json(json.dumps(saved))

    assert state.provider_failure is not None
    assert state.provider_failure.kind.value == "provider_failed"
    assert state.provider_failure.detail == "InternalServerError: litellm..."
