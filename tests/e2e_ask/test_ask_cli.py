"""`manage.py ask --json` end to end: each way a run can end, as a terminal user sees it."""

from __future__ import annotations


def calculator_call(expression: str) -> dict:
    return {"tool_calls": [{"name": "calculator", "arguments": {"expression": expression}}]}


def test_a_run_completes_and_prints_only_json_events(ask, server):
    server.set_script([calculator_call("17*23"), {"text": ["It is ", "391."]}])

    run = ask("What is 17*23?", "--json", server=server)

    assert run.returncode == 0, run.stderr
    types = [event["type"] for event in run.events]  # every stdout line is JSON
    assert types[0] == "run.started" and types[-1] == "run.finished"
    assert run.finished["reason"] == "completed"
    assert run.finished["final_text"] == "It is 391."
    assert run.of_type("tool.result")[0]["content"] == "391"
    seqs = [event["seq"] for event in run.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_the_iteration_limit_winds_down_and_stops(ask, server):
    server.set_script(
        [calculator_call("1+1"), calculator_call("2+2"), {"text": "Summary: 2 and 4."}]
    )

    run = ask("Add things", "--json", "--max-iterations", "3", server=server)

    assert run.returncode == 1
    assert run.finished["reason"] == "max_iterations"
    assert run.finished["iterations"] == 3
    assert "tools" in server.requests[1] and "tools" not in server.requests[2]
    assert run.finished["final_text"].startswith("Stopped: reached the iteration limit (3 of 3).")
    assert "Summary: 2 and 4." in run.finished["final_text"]
    assert run.of_type("system.notice")[-1]["metric"] == "iterations"


def test_the_same_call_three_times_ends_with_no_progress(ask, server):
    server.set_script([calculator_call("1+1")] * 3)

    run = ask("Loop", "--json", server=server)

    assert run.finished["reason"] == "no_progress"
    assert run.finished["failure_class"] == "deterministic"


def test_failing_tool_calls_end_with_tool_errors(ask, server):
    server.set_script([calculator_call("1/0"), calculator_call("2/0"), calculator_call("3/0")])

    run = ask("Divide", "--json", server=server)

    assert run.finished["reason"] == "tool_errors"
    assert all("division by zero" in r["content"] for r in run.of_type("tool.result"))


def test_a_slow_model_hits_the_timeout_keeping_what_it_streamed(ask, server):
    server.set_script([{"text": ["Working "], "hang": True, "chunk_delay": 0.2}])

    run = ask("Slow", "--json", "--timeout", "10", server=server)

    assert run.finished["reason"] == "timeout"
    assert 10_000 <= run.finished["elapsed_ms"] < 12_000
    assert "Working" in run.finished["final_text"]
    assert server.wait_for_disconnect(10)  # at once, unless the machine is busy


def test_an_unreachable_model_ends_with_provider_error(ask, server):
    server.set_script([{"status": 500, "headers": {"Retry-After": "0"}}], repeat_last=True)

    run = ask("Hello", "--json", server=server)

    assert run.finished["reason"] == "provider_error"
    assert run.finished["failure_class"] == "transient_infra"
    assert len(server.requests) == 4


def test_a_429_is_retried_once_and_the_run_completes(ask, server):
    server.set_script(
        [{"status": 429, "headers": {"Retry-After": "1"}}, {"text": "Fine after all."}]
    )

    run = ask("Hello", "--json", server=server)

    assert run.finished["reason"] == "completed"
    assert run.finished["final_text"] == "Fine after all."
    assert len(server.requests) == 2
    assert run.finished["elapsed_ms"] >= 1_000


def test_a_pause_ends_the_run_with_the_limits_reason_when_there_is_no_ui(ask, server):
    server.set_script([calculator_call("1+1"), calculator_call("2+2")])

    run = ask("Add", "--json", "--max-iterations", "2", "--limit-action", "pause", server=server)

    types = [event["type"] for event in run.events]
    assert types[-3:] == ["assistant.message", "system.notice", "run.finished"]
    assert types.index("run.paused") < types.index("run.finished")
    assert run.finished["reason"] == "max_iterations"
    assert len(server.requests) == 2


def test_a_bad_flag_value_is_a_clear_error_with_status_2(ask):
    run = ask("Hello", "--json", "--max-iterations", "0", "--max-cost", "cheap")

    assert run.returncode == 2
    assert run.stdout == ""
    assert "--max-iterations=0: Must be between 1 and 50." in run.stderr
    assert "--max-cost=cheap: Must be a number." in run.stderr


def test_an_unknown_skill_is_a_clear_error_with_status_2(ask):
    run = ask("Hello", "--skill", "astrology")

    assert run.returncode == 2
    assert "unknown skill 'astrology'" in run.stderr


def test_the_offline_model_answers_arithmetic_with_the_calculator(ask):
    run = ask("what is 17*23", "--json")

    assert run.returncode == 0, run.stderr
    assert run.events[0]["model"] == "oracle/offline"
    (call,) = run.of_type("tool.call")
    assert call["name"] == "calculator"
    assert "391" in run.finished["final_text"]
    assert "offline model" in run.finished["final_text"]


def test_without_json_it_prints_a_readable_transcript(ask):
    run = ask("what is 17*23")

    assert run.returncode == 0, run.stderr
    assert "→ calculator(expression='17*23')" in run.stdout
    assert "← 391" in run.stdout
    assert "— completed · 2 iterations · 1 tool call" in run.stdout


def test_the_operators_iteration_cap_ends_an_unlimited_run(ask, server):
    server.set_script([{"text": "Summary: nothing added yet."}, calculator_call("1+1")])

    run = ask("Add", "--json", "--unlimited", server=server, ORACLE_HARD_MAX_ITERATIONS="1")

    assert run.finished["iterations"] == 1, "the operator's cap of 1 iteration did not apply"
    assert run.finished["reason"] == "max_iterations"
    assert run.returncode == 1
    assert len(server.requests) == 1 and "tools" not in server.requests[0]  # the wind-down


def test_the_operators_time_cap_ends_a_run_with_a_longer_timeout(ask, server):
    server.set_script([{"text": ["Working "], "hang": True, "chunk_delay": 0.2}])

    run = ask("Slow", "--json", "--timeout", "600", server=server, ORACLE_HARD_TIMEOUT_SECONDS="2")

    assert run.finished["reason"] == "timeout"
    assert run.finished["elapsed_ms"] < 5_000, "the operator's 2 s cap did not apply"


def test_the_sites_daily_spending_cap_holds_in_ask_too(ask, server):
    server.set_script([{"text": "An answer that would cost money."}])

    run = ask("Hello", "--json", server=server, ORACLE_SITE_DAILY_COST_USD="0")

    assert run.finished["reason"] == "cost_budget"
    assert run.returncode == 1
    assert server.requests == [], "the run called the model past the site's daily cap"
    (notice,) = [e for e in run.of_type("system.notice") if e.get("reason") == "cost_budget"]
    assert notice["text"].startswith("The site's daily spending cap ($0.00) is used up")


def test_a_model_the_operator_does_not_offer_is_a_clear_error_with_status_2(ask, server):
    run = ask("Hello", "--json", "--model", "openai/gpt-4o", server=server)

    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.strip().splitlines() == [
        "CommandError: --model=openai/gpt-4o: Must be one of the allowed models: openai/fake-model."
    ]
    assert server.requests == []  # no run was made


def test_without_offered_models_only_the_offline_model_can_be_named(ask):
    refused = ask("what is 17*23", "--json", "--model", "openai/gpt-4o")
    offline = ask("what is 17*23", "--json", "--model", "oracle/offline")

    assert refused.returncode == 2
    assert refused.stdout == ""
    assert "--model=openai/gpt-4o: Only the server's default model" in refused.stderr
    assert offline.returncode == 0, offline.stderr
    assert offline.events[0]["model"] == "oracle/offline"


def test_a_delegated_helper_shows_as_subagent_events_and_its_answer_joins(ask, server):
    delegate = {"agent_type": "summarizer", "task": "Say 391 in words."}
    server.set_script(
        [
            {"tool_calls": [{"name": "delegate", "arguments": delegate}]},
            {"text": ["Three hundred ninety-one."]},  # the summarizer
            {"text": ["It is three hundred ninety-one."]},
        ]
    )

    run = ask("Say 391 in words", "--json", server=server)

    assert run.returncode == 0, run.stderr
    (started,) = run.of_type("subagent.started")
    assert (started["agent_type"], started["limits"]["max_iterations"]) == ("summarizer", 5)
    assert run.of_type("subagent.finished")[0]["reason"] == "completed"
    assert run.of_type("tool.result")[0]["content"] == "Three hundred ninety-one."
    assert run.finished["final_text"] == "It is three hundred ninety-one."


def test_quick_answer_offers_no_delegation(ask, server):
    server.set_script([{"text": ["Hi."]}])

    run = ask("Hello", "--json", "--skill", "quick_answer", server=server)

    assert run.returncode == 0, run.stderr
    offered = [tool["function"]["name"] for tool in server.requests[-1]["tools"]]
    assert "calculator" in offered and "delegate" not in offered


def test_instructions_go_to_the_model_after_its_own_system_prompt(ask, server):
    server.set_script([{"text": "Bonjour."}])

    run = ask("Hello", "--json", "--instructions", "Answer in French.", server=server)

    assert run.returncode == 0, run.stderr
    system = server.requests[0]["messages"][0]["content"]
    assert system.endswith("<custom_instructions>\nAnswer in French.\n</custom_instructions>")
    assert run.finished["instructions"] == "Answer in French."


def test_instructions_too_long_are_a_clear_error_with_status_2(ask, server):
    run = ask("Hello", "--json", "--instructions", "x" * 4001, server=server)

    assert run.returncode == 2
    assert run.stdout == ""
    assert "--instructions=xxx" in run.stderr
    assert "Must be at most 4,000 characters (this is 4,001)." in run.stderr
    assert server.requests == []
