"""Spending caps larger than one run (a daily cap per user or for the site): the worker
hands the engine what is left of one as the operator's cost cap, with the cap's name,
and the run stops there saying which cap it was."""

from __future__ import annotations

import pytest

from agents.config import OperatorLimits
from agents.testing.scripted import Call, Reply

ACCOUNT_CAP = "the daily spending cap for your account ($2.00)"
SITE_CAP = "the site's daily spending cap ($5.00)"
RESETS = "it resets at 00:00 UTC"


def left_of(name: str, left: float) -> OperatorLimits:
    return OperatorLimits(max_cost_usd=left, cost_cap_name=name, cost_cap_note=RESETS)


@pytest.mark.parametrize("action", ["stop", "pause", "extend", "warn"])
async def test_a_used_up_cap_ends_the_run_before_the_first_call_whatever_the_action(
    run, action: str
):
    outcome = await run(
        [Reply(text="Never sent.")], operator=left_of(ACCOUNT_CAP, 0.0), limit_action=action
    )

    assert outcome.reason == "cost_budget"
    assert outcome.model.calls == []
    (notice,) = outcome.notices()
    assert notice["text"] == (
        "The daily spending cap for your account ($2.00) is used up; it resets at 00:00 UTC."
    )
    assert notice["metric"] == "cost"
    assert outcome.result.final_text == (
        "Stopped: the daily spending cap for your account ($2.00) is used up."
    )
    # Continue cannot help before the cap renews: the page offers none.
    assert notice["problem"] == outcome.finished["problem"] == "spending_cap"


async def test_a_run_stops_when_it_has_spent_what_was_left_of_the_cap(run):
    outcome = await run(
        [Reply(text=["x" * 400] * 50, usage=None)],
        price=(0.0, 0.0001),
        operator=left_of(SITE_CAP, 0.03),
        max_cost_usd=1.00,
    )

    assert outcome.reason == "cost_budget"
    assert len(outcome.events.of_type("assistant.delta")) < 50
    assert 0.03 <= outcome.finished["cost_usd"] < 0.05
    assert outcome.result.final_text.startswith(
        "Stopped: reached the site's daily spending cap ($5.00): this run used $0.03"
    )
    assert "that was left of it." in outcome.result.final_text
    notice = outcome.notices()[-1]["text"]
    assert notice.startswith("Reached the site's daily spending cap ($5.00): this run used")
    assert notice.endswith("; it resets at 00:00 UTC.")
    assert "cost limit" not in notice


async def test_the_next_call_is_not_made_when_its_estimate_would_pass_what_is_left(run):
    # The first call costs $0.006 and the second is estimated at $0.019 (see
    # test_engine_budgets): $0.02 is left of the user's daily cap.
    outcome = await run(
        [
            Reply(calls=[Call("lookup", {"topic": "a"})], usage=(150, 10)),
            Reply(text="Never sent."),
        ],
        price=(0.00004, 0.0),
        operator=left_of(ACCOUNT_CAP, 0.02),
    )

    assert outcome.reason == "cost_budget"
    assert len(outcome.model.calls) == 1
    assert outcome.result.final_text.startswith(
        "Stopped: the next model call would pass the daily spending cap for your account "
        "($2.00): this run has used $0.006 of the $0.02 that was left of it."
    )


async def test_the_users_own_lower_cost_limit_still_speaks_for_itself(run):
    outcome = await run(
        [Reply(text=["x" * 400] * 50, usage=None)],
        price=(0.0, 0.0001),
        operator=left_of(ACCOUNT_CAP, 0.5),
        max_cost_usd=0.03,
    )

    assert outcome.reason == "cost_budget"
    assert outcome.result.final_text.startswith("Stopped: reached the cost limit ($0.03")
    assert "daily" not in outcome.notices()[-1]["text"]
    assert outcome.notices()[-1]["problem"] is None  # Continue can give it another round


async def test_the_per_run_cap_without_a_name_keeps_its_usual_words(run):
    outcome = await run(
        [Reply(text=["x" * 400] * 50, usage=None)],
        price=(0.0, 0.0001),
        operator=OperatorLimits(max_cost_usd=0.03),
        limit_action="warn",
    )

    assert outcome.reason == "cost_budget"
    assert outcome.result.final_text.startswith("Stopped: reached the cost limit ($0.03")
    assert outcome.notices()[-1]["text"].endswith(
        "Press Continue to give the Oracle another round."
    )
