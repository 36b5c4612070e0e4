"""No progress: which repeated tool calls are a loop, and which are work (agents/progress.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.progress import Action, Stuck, find_cycle, history_size
from agents.tools import ToolResult

TRACES = Path(__file__).parent / "traces"


def act(name: str, ok: bool = True, content: str = "result", **arguments: Any) -> Action:
    return Action.from_result(ToolResult("call", name, arguments, ok, content))


def page(number: int, content: str = "") -> Action:
    return act("read_document", content=content or f"page {number} text", doc_id="d1", page=number)


# --- the rules ------------------------------------------------------------------------


def test_the_same_call_with_the_same_result_three_times_is_stuck():
    stuck = find_cycle([act("calculator", expression="1+1")] * 3, repeats=3)

    assert stuck is not None
    assert (stuck.period, stuck.repeats) == (1, 3)


def test_one_repeat_fewer_than_the_threshold_is_not_stuck():
    assert find_cycle([act("calculator", expression="1+1")] * 2, repeats=3) is None


def test_argument_key_order_does_not_make_a_call_new():
    first = act("search_documents", query="owls", filters={"year": 2024, "lang": "en"})
    second = act("search_documents", filters={"lang": "en", "year": 2024}, query="owls")

    assert first == second
    assert find_cycle([first, second, first], repeats=3) is not None


def test_paging_on_is_progress():
    assert find_cycle([page(number) for number in range(1, 10)], repeats=3) is None


def test_going_back_and_forth_between_two_unchanging_pages_is_stuck():
    stuck = find_cycle([page(1), page(2)] * 3, repeats=3)

    assert stuck is not None
    assert stuck.actions == (page(1), page(2))


def test_polling_that_sees_new_results_is_progress():
    polls = [
        act("check_job", content=f"running, {percent}% done", job="j1") for percent in (10, 20, 30)
    ]

    assert find_cycle(polls, repeats=3) is None


def test_polling_that_sees_the_same_result_is_stuck():
    polls = [act("check_job", content="running, 60% done", job="j1")] * 3

    assert find_cycle(polls, repeats=3) is not None


def test_a_retry_that_succeeds_is_progress():
    failed = act("fetch_page", ok=False, content="Error: HTTP 503", url="https://example.org")
    worked = act("fetch_page", ok=True, content="Title: Example", url="https://example.org")

    assert find_cycle([failed, failed, worked], repeats=3) is None


def test_a_failing_call_retried_with_the_same_error_is_stuck():
    failed = act("fetch_page", ok=False, content="Error: HTTP 503", url="https://example.org")

    stuck = find_cycle([failed] * 3, repeats=3)

    assert stuck is not None
    assert stuck.describe().endswith("failing the same way each time")


def test_the_same_content_failing_and_succeeding_is_not_the_same_outcome():
    assert act("tool", ok=True, content="x") != act("tool", ok=False, content="x")


def test_a_cycle_of_three_calls_is_stuck():
    search = act("search_documents", query="owls")
    read = act("read_document", doc_id="d1")
    total = act("calculator", expression="2*3")

    stuck = find_cycle([search, read, total] * 3, repeats=3)

    assert stuck is not None
    assert stuck.actions == (search, read, total)


def test_a_cycle_of_four_calls_is_left_to_the_tool_budget_unless_asked_for():
    cycle = [act("tool", step=step) for step in range(4)]

    assert find_cycle(cycle * 3, repeats=3) is None
    assert find_cycle(cycle * 3, repeats=3, max_period=4) is not None


def test_a_cycle_the_run_broke_out_of_is_progress():
    search, read = act("search_documents", query="owls"), act("read_document", doc_id="d1")

    assert find_cycle([search, read] * 3 + [act("calculator", expression="1+1")], repeats=3) is None


def test_only_the_latest_calls_count():
    loop = [act("search_documents", query="owls")] * 3
    fresh = [act("read_document", doc_id=f"d{n}") for n in range(3)]

    assert find_cycle(fresh + loop, repeats=3) is not None
    assert find_cycle(loop + fresh, repeats=3) is None


def test_the_shortest_cycle_is_reported():
    stuck = find_cycle([act("calculator", expression="1+1")] * 6, repeats=3)

    assert stuck is not None
    assert stuck.period == 1


def test_the_history_size_holds_the_longest_cycle():
    cycle = [act("tool", step=step) for step in range(3)]
    trace = [act("other", n=n) for n in range(5)] + cycle * 4

    assert history_size(4) == 12
    assert find_cycle(trace[-history_size(4) :], repeats=4) == find_cycle(trace, repeats=4)


def test_fewer_than_two_repeats_is_refused():
    with pytest.raises(ValueError):
        find_cycle([act("tool")], repeats=1)


# --- what the user is told ------------------------------------------------------------


def test_identical_calls_are_described_by_their_count_and_call():
    stuck = find_cycle([act("calculator", expression="1+1")] * 3, repeats=3)

    assert stuck is not None
    assert stuck.describe() == "3 identical calls of calculator(1+1) in a row"


def test_a_cycle_is_described_by_its_calls_and_count():
    stuck = find_cycle([act("search", query="x"), page(2)] * 3, repeats=3)

    assert stuck is not None
    assert stuck.describe() == (
        "the same 2 calls (search(x), read_document(doc_id=d1, page=2)) 3 times over"
    )


def test_long_arguments_are_cut_short():
    stuck = Stuck(1, 3, (act("search_documents", query="why " * 40),))

    call = stuck.describe().removeprefix("3 identical calls of ").removesuffix(" in a row")
    assert call == "search_documents(" + ("why " * 10)[:39] + "…)"


# --- properties -----------------------------------------------------------------------

actions = st.builds(
    Action,
    name=st.sampled_from(["search_documents", "read_document", "calculator"]),
    arguments=st.sampled_from(['{"q":"owls"}', '{"q":"bees"}', '{"page":2}']),
    outcome=st.sampled_from(["ok:aa", "ok:bb", "error:cc"]),
)
repeat_counts = st.integers(min_value=2, max_value=5)


@given(st.lists(actions, unique=True, max_size=27), repeat_counts)
def test_distinct_calls_are_never_stuck(trace, repeats):
    assert find_cycle(trace, repeats) is None


@given(st.lists(actions, max_size=10), st.lists(actions, min_size=1, max_size=3), repeat_counts)
def test_any_short_cycle_repeated_at_the_end_is_stuck(prefix, cycle, repeats):
    trace = prefix + cycle * repeats

    stuck = find_cycle(trace, repeats)

    assert stuck is not None
    assert stuck.period <= len(cycle)
    assert list(stuck.actions) * repeats == trace[-stuck.period * repeats :]


@given(st.lists(actions, max_size=30), repeat_counts)
def test_keeping_only_the_history_size_changes_nothing(trace, repeats):
    assert find_cycle(trace[-history_size(repeats) :], repeats) == find_cycle(trace, repeats)


@given(st.lists(actions, max_size=30), repeat_counts)
def test_the_detector_agrees_with_the_rule_read_the_slow_way(trace, repeats):
    expected = next(
        (
            period
            for period in (1, 2, 3)
            if len(trace) >= period * repeats
            and trace[len(trace) - period * repeats :] == trace[len(trace) - period :] * repeats
        ),
        None,
    )

    stuck = find_cycle(trace, repeats)

    assert (stuck.period if stuck else None) == expected


# --- the labelled trace set -----------------------------------------------------------


def load_traces() -> list[dict[str, Any]]:
    lines = [line for path in sorted(TRACES.glob("*.jsonl")) for line in path.open()]
    return [json.loads(line) for line in lines]


def flagged_at(trace: dict[str, Any]) -> int | None:
    """The step after which the detector stops the run, asked as the engine asks it."""
    repeats, recent = trace["repeats"], []
    for step, action in enumerate(trace["actions"], start=1):
        recent.append(Action.from_result(ToolResult("call", **action)))
        del recent[: -history_size(repeats)]
        if find_cycle(recent, repeats) is not None:
            return step
    return None


def test_the_trace_set_is_classified_as_labelled():
    traces = load_traces()
    stuck_at = {trace["id"]: len(trace["actions"]) for trace in traces if trace["label"] == "stuck"}
    wrong = [trace for trace in traces if flagged_at(trace) != stuck_at.get(trace["id"])]
    false_positives = [trace for trace in wrong if trace["label"] == "productive"]

    assert len(traces) >= 200
    assert 1 - len(wrong) / len(traces) >= 0.99, [trace["id"] for trace in wrong]
    assert len(false_positives) / (len(traces) - len(stuck_at)) <= 0.01
