"""The facts a limit's notice carries as fields, not only in its words: the steps a run
stuck for no progress repeated, and the spending cap a run ended at."""

from __future__ import annotations

from agents.config import OperatorLimits
from agents.state import AgentState, LimitHit, Metric
from agents.testing.scripted import tool_loop

ACCOUNT_CAP = "the daily spending cap for your account ($2.00)"
RESETS = "it resets at 00:00 UTC"


async def test_the_notice_of_a_stuck_run_names_its_pattern_as_a_field(run):
    outcome = await run(tool_loop("lookup", lambda i: {"topic": "owls"}))

    notice = outcome.notices()[-1]
    assert notice["pattern"] == "3 identical calls of lookup(owls) in a row"
    assert notice["text"].startswith(f"Stopped making progress: {notice['pattern']} (limit 3).")
    assert "cap" not in notice


async def test_the_notice_of_a_used_up_cap_names_the_cap_as_a_field(run):
    operator = OperatorLimits(max_cost_usd=0.0, cost_cap_name=ACCOUNT_CAP, cost_cap_note=RESETS)

    outcome = await run([], operator=operator)

    (notice,) = outcome.notices()
    assert (notice["cap"], "pattern" in notice) == (ACCOUNT_CAP, False)
    assert notice["text"] == f"The {ACCOUNT_CAP.removeprefix('the ')} is used up; {RESETS}."


def test_a_state_saved_when_the_facts_rode_in_the_detail_loads_them_as_fields():
    stuck, capped = AgentState(run_id="r1"), AgentState(run_id="r2")
    stuck.limit_hit = LimitHit(Metric.REPEATS, 3, 3)
    capped.limit_hit = LimitHit(Metric.COST, 0.5, 0.5)
    old_stuck = stuck.to_json().replace('"detail":""', '"detail":"2 identical calls of x(1)"')
    old_capped = capped.to_json().replace('"detail":""', f'"detail":"{ACCOUNT_CAP}; {RESETS}"')
    for saved in (old_stuck, old_capped):  # saved before the fields were there at all
        assert saved.count('"pattern":"","cap":""') == 1
    old_stuck = old_stuck.replace(',"pattern":"","cap":""', "")
    old_capped = old_capped.replace(',"pattern":"","cap":""', "")

    stuck_hit = AgentState.from_json(old_stuck).limit_hit
    capped_hit = AgentState.from_json(old_capped).limit_hit

    assert stuck_hit == LimitHit(Metric.REPEATS, 3, 3, pattern="2 identical calls of x(1)")
    assert capped_hit == LimitHit(Metric.COST, 0.5, 0.5, detail=RESETS, cap=ACCOUNT_CAP)
