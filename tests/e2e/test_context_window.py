"""The context window on the real stack: a conversation that outgrows the model's window
keeps answering through the API and a real worker; the provider refuses one request in
all (the window it shows is remembered for every run after, in the database); each
request carries the newest message; and the stored conversation stays whole."""

from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import pytest

from agents.testing.fake_server import FakeServer
from tests.e2e.test_runs_api import sse_events, wait_until_finished
from tests.stack import OracleStack

MODEL = "openai/fake-window"  # a model of the session's stack no other test uses
WORDS = "owl river stone lantern maple quiet harbor ember violet canyon".split()  # noqa: SIM905


def long_message(number: int) -> str:
    """About 1,000 tokens that say which message they are."""
    chosen = random.Random(number)
    return f"Message {number}: " + " ".join(chosen.choice(WORDS) for _ in range(900))


@pytest.fixture
def small_window(fake_provider: FakeServer) -> Iterator[FakeServer]:
    """The fake provider refusing requests over 3,000 tokens, as OpenAI refuses them."""
    fake_provider.set_script([{"text": ["Noted."]}], repeat_last=True)
    fake_provider.window = 3_000
    try:
        yield fake_provider
    finally:
        fake_provider.window = None


def post(client: httpx.Client, conversation: str, content: str) -> str:
    posted = client.post(f"/api/conversations/{conversation}/messages/", json={"content": content})
    assert posted.status_code == 202, posted.text
    run_id = posted.json()["run_id"]
    # A new worker's first run imports LiteLLM (seconds, more on a busy machine).
    assert wait_until_finished(client, run_id, 60)["reason"] == "completed"
    return str(run_id)


def test_ten_long_messages_against_a_3000_token_window_all_complete_and_none_is_lost(
    stack: OracleStack, small_window: FakeServer
) -> None:
    client = stack.client(stack.create_user("wendy"))
    assert client.patch("/api/settings/", json={"model": MODEL}).status_code == 200
    conversation = client.post("/api/conversations/", json={}).json()["id"]
    asked, refused = len(small_window.requests), len(small_window.refused)
    questions = [long_message(number) for number in range(1, 11)]

    runs = [post(client, conversation, question) for question in questions]

    assert len(small_window.refused) - refused == 1
    answered = [r for r in small_window.requests[asked:] if not r.get("max_tokens")]
    assert [r["messages"][-1]["content"] for r in answered] == questions
    stored = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    assert [m["content"] for m in stored if m["role"] == "user"] == questions
    assert [m["content"] for m in stored if m["role"] == "assistant"] == ["Noted."] * 10
    notices = [m["content"] for m in stored if m["role"] == "system"]
    assert notices and all("to fit the model's 3,000-token context" in notice for notice in notices)
    # Each summary is made once, from the one before it and what came since: a run
    # starts from the summary an earlier run stored, rather than from the whole history.
    summaries = [r for r in small_window.requests[asked:] if r.get("max_tokens")]
    assert 1 <= len(summaries) <= len(runs)
    for request in summaries[1:]:
        assert request["messages"][-1]["content"].startswith("Summary of the conversation so far:")
    # The stream carries it too, as the README's event table says.
    events = [e["type"] for run in runs for e in sse_events(client, run)]
    assert events.count("context.refused") == 1
    assert "context.compacted" in events and "context.used" in events
