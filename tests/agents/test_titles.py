"""A conversation's title, from its model: short, clean, and never an error."""

from __future__ import annotations

import pytest

from agents.model import ModelError, ModelProblem
from agents.testing.scripted import Reply, ScriptedModel
from agents.titles import TITLE_INSTRUCTION, clean_title, suggest_title


async def test_the_model_names_the_conversation_from_its_question_and_answer() -> None:
    model = ScriptedModel([Reply(text=["Trip ", "to ", "Lisbon"])])

    title = await suggest_title(model, "Plan three days in Lisbon", "Day one: Alfama.")

    assert title == "Trip to Lisbon"
    (call,) = model.calls
    assert call.tools is None
    assert call.messages[0] == {"role": "system", "content": TITLE_INSTRUCTION}
    assert "Plan three days in Lisbon" in call.messages[1]["content"]
    assert "Day one: Alfama." in call.messages[1]["content"]


async def test_a_failing_model_gives_no_title() -> None:
    failing = ScriptedModel([Reply(error=ModelError("boom", kind=ModelProblem.AUTH))])
    assert await suggest_title(failing, "Q", "A") == ""


@pytest.mark.parametrize(
    ("said", "title"),
    [
        ('"Trip to Lisbon".', "Trip to Lisbon"),
        ("Title: **Trip to Lisbon**", "Trip to Lisbon"),
        ("\n\n  Trip   to\tLisbon  \nSecond line", "Trip to Lisbon"),
        ("", ""),
        ("...", ""),
        ("word " * 30, ("word " * 12).strip()),
    ],
)
def test_a_title_is_one_clean_short_line(said: str, title: str) -> None:
    assert clean_title(said) == title
