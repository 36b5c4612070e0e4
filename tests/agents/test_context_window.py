"""Knowing the window from a provider's own words, and shortening a message to fit."""

from __future__ import annotations

import pytest

from agents.context.view import cut_text, split_points
from agents.context.window import ContextWindow, requested_in_refusal, window_in_refusal


@pytest.mark.parametrize(
    ("words", "window", "requested"),
    [
        (
            "This model's maximum context length is 4096 tokens. However, you requested "
            "4500 tokens (4500 in the messages, 0 in the completion).",
            4096,
            4500,
        ),
        ("Requested tokens (5012) exceed context window of 2048", 2048, 5012),
        (
            '{"code":400,"message":"the request exceeds the available context size, try '
            'increasing it","type":"exceed_context_size_error","n_prompt_tokens":5120,'
            '"n_ctx":4096}',
            4096,
            5120,
        ),
        ("prompt is too long: 210,000 tokens > 200,000 maximum", 200_000, 210_000),
        (
            "The input token count (40000) exceeds the maximum number of tokens allowed (32768).",
            32_768,
            None,
        ),
        ("the request exceeds the available context size, try increasing it", None, None),
    ],
)
def test_it_reads_the_window_and_the_size_refused_from_each_providers_words(
    words, window, requested
):
    assert window_in_refusal(words) == window
    assert requested_in_refusal(words) == requested


def test_a_small_window_keeps_most_of_itself_for_the_prompt():
    small = ContextWindow(3_000)
    assert small.reply_reserve == 375
    assert small.mark(80) == 2_400
    large = ContextWindow(128_000, output_tokens=16_384)
    assert large.reply_reserve == 16_000
    assert large.mark(95) == 112_000  # never into the reply's room


def test_a_cut_keeps_the_head_and_the_tail_and_says_how_much_is_left_out():
    text = "A" * 6_000 + "B" * 6_000
    cut = cut_text(text, 3_000, "tool result")
    assert cut.startswith("A" * 2_000) and cut.endswith("B" * 1_000)
    assert "[… 9,000 characters of this tool result are left out here" in cut
    assert cut_text("short", 3_000, "message") == "short"


def test_the_history_is_never_cut_between_a_call_and_its_results():
    messages = [
        {"role": "system", "content": "prompt"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}, {"id": "2"}]},
        {"role": "tool", "tool_call_id": "1", "content": "a"},
        {"role": "tool", "tool_call_id": "2", "content": "b"},
        {"role": "assistant", "content": "done"},
    ]
    assert split_points(messages, 1, 6) == [1, 2, 5, 6]
