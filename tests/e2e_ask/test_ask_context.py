"""`manage.py ask` keeps the model's window as the chat does: a refusal for length is
learnt from and the step sent again, shortened; a message the window cannot hold ends
the run at once, saying so; the transcript says what was shortened."""

from __future__ import annotations

import random
import uuid

WORDS = "owl river stone lantern maple quiet harbor ember violet canyon".split()  # noqa: SIM905


def long_question(words: int) -> str:
    chosen = random.Random(words)
    return "Read this: " + " ".join(chosen.choice(WORDS) for _ in range(words))


def own_model() -> str:
    """A model name of the test's own: a window learnt from a refusal is kept in the
    database per model, and `ask`s on other workers share it (on PostgreSQL)."""
    return f"openai/fake-{uuid.uuid4().hex[:12]}"


def test_a_message_the_window_cannot_hold_ends_the_run_at_once_with_advice(ask, server):
    server.set_script([{"text": "Never asked."}])
    model = own_model()

    run = ask("--json", long_question(3_000), "--model", model, server=server,
              ORACLE_MODELS=model, ORACLE_MODEL_WINDOWS=f"{model}=2000")  # fmt: skip

    assert run.returncode == 1
    assert run.finished["reason"] == "context_window"
    (notice,) = run.of_type("system.notice")
    assert "does not fit the model's 2,000-token context" in notice["text"]
    assert "Shorten your message or split it into parts" in notice["text"]
    assert server.requests == []


def test_a_refusal_for_length_is_learnt_from_and_the_answer_comes(ask, server):
    # Long tool results fill the window: the fourth request is refused; what is sent
    # again leaves the earlier results out (the newest stays whole) and the run answers.
    server.set_script(
        [{"tool_calls": [{"name": "long_text", "arguments": {"part": n}}]} for n in range(6)]
        + [{"text": ["The text is about owls."]}]
    )
    server.window = 6_000

    model = own_model()
    run = ask("--json", "Read the long text.", "--token-budget", "200000", "--model", model,
              server=server, ORACLE_MODELS=model,
              ORACLE_TOOLS="agents.testing.tools.long_text")  # fmt: skip

    assert run.returncode == 0, run.stderr
    assert run.finished["final_text"] == "The text is about owls."
    (refused,) = run.of_type("context.refused")
    assert refused["window"] == 6_000
    (compacted,) = run.of_type("context.compacted")
    assert compacted["stubbed"] >= 1
    assert len(server.refused) == 1
    last = [m.get("content") or "" for m in server.requests[-1]["messages"]]
    assert "Read the long text." in last
    assert any(text.startswith("Part 5: ") for text in last)  # the newest result, whole
