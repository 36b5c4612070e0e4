"""The context window against a real model server no one here wrote: llama-cpp-python's
OpenAI-compatible server with SmolLM2-135M-Instruct at `--n_ctx 4096`
(bench/llama_server.py). Marked `llama`: `make test-llama` installs the server into
.venv-llama and runs it; `make test` deselects it.

The runs start knowing nothing of the window, as for a model LiteLLM does not know and
the operator did not name: the first request over it teaches it. That server answers a
streamed request longer than its window with a 200 and an empty stream (its refusal only
in its log); Oracle asks such a request again unstreamed, which brings the server's 400
with the window in it. SmolLM2 answers what it likes; what is checked is that the
conversation keeps going.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
# bench/ is not a package: `context` (the conversation bench/context.py measures) and
# `llama_server` import from its folder, in the test (they load LiteLLM).
sys.path.insert(0, str(BENCH))

N_CTX = 4096

pytestmark = pytest.mark.llama


@pytest.mark.timeout(2400)
async def test_ten_messages_of_a_thousand_tokens_against_its_4096_token_window_all_answer() -> None:
    import context
    from llama_server import LlamaServer

    questions = [context.long_message(number) for number in range(1, 11)]
    with LlamaServer(n_ctx=N_CTX) as server:
        model = context.Recorded(context.litellm_model(server.base_url, "openai/smollm2"))
        chat = context.Conversation(model)  # no window known: a refusal teaches it
        turns = []
        for question in questions:
            began = time.monotonic()
            turns.append(await chat.send(question))
            print(f"turn {len(turns)}: {time.monotonic() - began:.1f} s, {turns[-1].reason}")

    for number, turn in enumerate(turns, 1):
        assert turn.reason == "completed", (number, [e["type"] for e in turn.events])
    # The conversation outgrew the window: older turns were summarised by the model.
    assert sum(turn.compaction_calls for turn in turns) >= 1
    assert any(e["type"] == "context.compacted" for turn in turns for e in turn.events)
    # At most one request was refused in all (a streamed one that does not fit comes
    # back empty: a failed call), and every request carried the newest message whole.
    calls = [call for turn in turns for call in turn.calls]
    assert sum(call.error is not None for call in calls) <= 1, [str(c.error) for c in calls]
    refusals = [e for turn in turns for e in turn.events if e["type"] == "context.refused"]
    assert [e["window"] for e in refusals] == [N_CTX]  # learnt once, from the server's words
    for question, turn in zip(questions, turns, strict=True):
        answers = [call for call in turn.calls if not call.compaction]
        assert answers
        for call in answers:
            assert {"role": "user", "content": question} in call.messages
    # What each answer's request held, as the run measured it, stayed inside the window.
    for turn in turns:
        for used in (e for e in turn.events if e["type"] == "context.used"):
            assert used["window"] == N_CTX and used["prompt_tokens"] <= N_CTX
