"""An answer the model's own output limit cut off (finish_reason "length") is not finished."""

from __future__ import annotations

from agents.testing.scripted import Reply
from agents.wording import CUT_OFF_HINT


async def test_a_cut_off_answer_is_continued_into_the_same_answer(run):
    outcome = await run(
        [
            Reply(text=["The three laws ", "are: first, "], finish_reason="length"),
            Reply(text=["second, ", "and third."]),
        ]
    )

    assert outcome.reason == "completed"
    assert outcome.result.final_text == "The three laws are: first, second, and third."
    assert outcome.finished["iterations"] == 2  # a counted iteration
    second = outcome.model.calls[1].messages
    assert second[-2] == {"role": "assistant", "content": "The three laws are: first, "}
    assert second[-1] == {"role": "system", "content": CUT_OFF_HINT}
    (final,) = [e for e in outcome.events.of_type("assistant.message") if e["final"]]
    assert final["text"] == "The three laws are: first, second, and third."


async def test_a_limit_that_stops_a_continuation_says_so(run):
    cut = Reply(text="more and more ", finish_reason="length")
    outcome = await run([cut, cut, cut], max_iterations=3)

    assert outcome.reason == "max_iterations"
    assert outcome.result.final_text.startswith(
        "Stopped: reached the iteration limit (3 of 3) while continuing an answer the "
        "model's output limit had cut off."
    )
    assert outcome.result.final_text.endswith("more and more more and more more and more")
