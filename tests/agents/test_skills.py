"""Skills: each brings its limits, its tools and its own decision tree, and the loop is
the same for all of them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents.config import AgentConfig, LimitAction, OperatorLimits
from agents.events import EventCollector
from agents.loop import RunDeps, RunResult, continue_run, start_run
from agents.model import ModelRequest
from agents.skill_trees import DeepResearchTree, QuickAnswerTree
from agents.skills import SKILLS, Skill, UnknownSkillError, skill_named, skills
from agents.state import AgentState
from agents.testing.scripted import Call, Reply, ScriptedModel, tool_loop
from agents.tools import Tool, ToolError, ToolRegistry
from agents.tree import (
    DecisionTree,
    DefaultDecisionTree,
    UnknownTreeError,
    create_tree,
    decision_tree,
)

PLAN_HINT = (
    "Before you search, write a short numbered plan (2-4 steps) of what you will look up, "
    "then follow it."
)
QUICK_HINT = "Answer directly and briefly; use a tool only if you must."
NOTHING_NEW = "Two searches in a row found nothing new, so the Oracle is writing its answer now."
FINAL = "Owls hunt at night; here is what the documents say."


@decision_tree("skills_test_only_a_tree")
class OnlyATree(DefaultDecisionTree):
    """Registered as a tree, never offered as a skill."""


# --- a knowledge base for the searches ----------------------------------------------


def passage(document_id: int, start: int) -> dict[str, Any]:
    return {
        "document_id": document_id,
        "title": f"Document {document_id}",
        "location": "page 1",
        "start": start,
        "length": 100,
        "text": f"Passage {document_id}:{start} about owls.",
    }


def knowledge_base(answers: dict[str, list[dict[str, Any]] | str]) -> ToolRegistry:
    """`search_documents` answering each query with its passages (or failing, for a str)."""

    def search_documents(query: str) -> str:
        """Search the user's documents.

        Args:
            query: What to look for.
        """
        found = answers[query]
        if isinstance(found, str):
            raise ToolError(found)
        return json.dumps({"query": query, "results": found})

    def lookup(topic: str) -> str:
        """Look a topic up.

        Args:
            topic: What to look up.
        """
        return f"Notes about {topic}."

    return ToolRegistry([Tool.from_function(search_documents), Tool.from_function(lookup)])


def searches(*queries: str) -> Any:
    """Search each query in turn (one a call), then answer once the tools are taken away."""

    def script(index: int, request: ModelRequest) -> Reply:
        if request.tools is None or index >= len(queries):
            return Reply(text=FINAL)
        return Reply(calls=[Call("search_documents", {"query": queries[index]})])

    return script


async def drive(
    tree: DecisionTree, script: Any, tools: ToolRegistry | None = None
) -> tuple[RunResult, ScriptedModel, EventCollector]:
    model = ScriptedModel(script)
    events = EventCollector()
    deps = RunDeps(model=model, tree=tree, tools=tools or knowledge_base({}))
    result = await start_run("What do owls eat?", deps, on_event=events)
    return result, model, events


def contents(messages: list[dict[str, Any]]) -> list[Any]:
    return [message.get("content") for message in messages]


A, B, C = passage(1, 0), passage(1, 620), passage(2, 0)


# --- the registry -------------------------------------------------------------------


def test_the_skills_are_listed_in_display_order_with_one_line_descriptions():
    assert [s.name for s in skills()] == ["default", "deep_research", "quick_answer"]
    assert [s.title for s in skills()] == ["Default", "Deep research", "Quick answer"]
    assert list(SKILLS) == skills()
    for skill in skills():
        assert skill.description.strip()
        assert "\n" not in skill.description
        assert len(skill.description) <= 120


def test_a_skill_is_found_by_its_name():
    assert skill_named("deep_research").title == "Deep research"


@pytest.mark.parametrize("name", ["nope", "skills_test_only_a_tree", "", "Default"])
def test_an_unknown_skill_is_a_clear_error_naming_the_skills(name: str):
    with pytest.raises(UnknownSkillError) as raised:
        skill_named(name)
    assert str(raised.value) == (
        f"unknown skill {name!r} (known: default, deep_research, quick_answer)"
    )
    # Code that handles an unknown tree handles an unknown skill too.
    assert isinstance(raised.value, UnknownTreeError)
    assert isinstance(raised.value, LookupError)


@pytest.mark.parametrize(
    ("name", "tree_class"),
    [
        ("default", DefaultDecisionTree),
        ("deep_research", DeepResearchTree),
        ("quick_answer", QuickAnswerTree),
    ],
)
def test_each_skill_runs_its_own_registered_tree(name: str, tree_class: type):
    assert type(create_tree(name, AgentConfig())) is tree_class
    tree = skill_named(name).tree(AgentConfig(), OperatorLimits())
    assert type(tree) is tree_class
    assert tree.get_config() == skill_named(name).config(AgentConfig(), OperatorLimits())


def test_quick_answer_does_not_delegate_and_the_others_may():
    quick, deep, default = (skill_named(n) for n in ("quick_answer", "deep_research", "default"))
    assert not quick.can_delegate
    assert not quick.allows_tool("delegate")
    assert quick.allows_tool("calculator") and quick.allows_tool("search_documents")
    assert deep.can_delegate and deep.allows_tool("delegate")
    assert default.allows_tool("delegate") and default.allows_tool("calculator")


# --- the limits each skill runs under -----------------------------------------------


def test_the_default_skill_keeps_the_users_limits():
    config = AgentConfig(max_iterations=7, max_tool_calls_per_turn=12, unlimited_iterations=True)
    assert skill_named("default").config(config, OperatorLimits()) == config


@pytest.mark.parametrize(
    ("user", "operator_cap", "expected"),
    [
        (15, 200, 30),  # doubled
        (30, 200, 50),  # within AgentConfig's bound of 50
        (50, 200, 50),
        (15, 20, 20),  # within the operator's cap
        (15, 10, 15),  # never below the user's own limit
        (1, 200, 2),
    ],
)
def test_deep_research_doubles_the_iterations_within_the_bounds(
    user: int, operator_cap: int, expected: int
):
    config = AgentConfig(max_iterations=user)
    deep = skill_named("deep_research").config(config, OperatorLimits(max_iterations=operator_cap))
    assert deep.max_iterations == expected
    assert deep.max_tool_calls_per_turn == config.max_tool_calls_per_turn


def test_deep_research_leaves_unlimited_iterations_alone():
    config = AgentConfig(max_iterations=15, unlimited_iterations=True)
    assert skill_named("deep_research").config(config, OperatorLimits()) == config


@pytest.mark.parametrize(
    ("iterations", "tool_calls", "unlimited", "expected"),
    [
        (15, 30, False, (3, 5)),
        (2, 4, False, (2, 4)),  # the user's own lower limits stay
        (15, 30, True, (3, 5)),  # a quick answer is quick even with unlimited iterations
    ],
)
def test_quick_answer_caps_iterations_and_tool_calls(
    iterations: int, tool_calls: int, unlimited: bool, expected: tuple[int, int]
):
    config = AgentConfig(
        max_iterations=iterations,
        max_tool_calls_per_turn=tool_calls,
        unlimited_iterations=unlimited,
    )
    quick = skill_named("quick_answer").config(config, OperatorLimits())
    assert (quick.max_iterations, quick.max_tool_calls_per_turn) == expected
    assert quick.unlimited_iterations is False
    assert quick.token_budget == config.token_budget


async def test_a_quick_answer_stops_at_three_iterations():
    tree = skill_named("quick_answer").tree(AgentConfig(), OperatorLimits())
    script = tool_loop("lookup", lambda i: {"topic": f"topic {i}"})

    result, model, _ = await drive(tree, script)

    assert result.reason is not None and result.reason.value == "max_iterations"
    assert len(model.calls) == 3
    assert model.calls[2].tools is None  # the third call is the wind-down
    assert "Stopped: reached the iteration limit (3 of 3)" in result.final_text


async def test_deep_research_may_go_on_twice_as_long_as_the_default():
    config = AgentConfig(max_iterations=3)
    script = tool_loop("lookup", lambda i: {"topic": f"topic {i}"})

    _, default_model, _ = await drive(skill_named("default").tree(config, OperatorLimits()), script)
    deep, deep_model, _ = await drive(
        skill_named("deep_research").tree(config, OperatorLimits()), script
    )

    assert (len(default_model.calls), len(deep_model.calls)) == (3, 6)
    assert "(6 of 6)" in deep.final_text


# --- first-turn hints ---------------------------------------------------------------


async def test_deep_research_asks_for_a_plan_before_the_first_search_and_the_default_does_not():
    script = [Reply(calls=[Call("lookup", {"topic": "owls"})]), Reply(text=FINAL)]

    _, deep_model, _ = await drive(create_tree("deep_research", AgentConfig()), script)
    _, default_model, _ = await drive(create_tree("default", AgentConfig()), script)

    first = contents(deep_model.calls[0].messages)
    assert first.index(PLAN_HINT) > first.index("What do owls eat?")
    assert contents(deep_model.calls[1].messages).count(PLAN_HINT) == 1  # not again
    assert PLAN_HINT not in contents(default_model.calls[0].messages)
    assert QUICK_HINT not in first


async def test_a_quick_answer_is_told_to_answer_directly():
    _, quick_model, _ = await drive(create_tree("quick_answer", AgentConfig()), [Reply(text="4.")])
    _, default_model, _ = await drive(create_tree("default", AgentConfig()), [Reply(text="4.")])

    assert QUICK_HINT in contents(quick_model.calls[0].messages)
    assert PLAN_HINT not in contents(quick_model.calls[0].messages)
    assert QUICK_HINT not in contents(default_model.calls[0].messages)


# --- deep research: diminishing returns ---------------------------------------------


async def test_two_searches_with_nothing_new_wind_the_run_down_and_it_completes():
    tools = knowledge_base({"owls": [A, B], "owl diet": [B], "owl food": [A, B], "more": [C]})

    result, model, events = await drive(
        create_tree("deep_research", AgentConfig()),
        searches("owls", "owl diet", "owl food", "more"),
        tools,
    )

    assert len(model.calls) == 4  # three searches, then the answer
    assert model.calls[2].tools is not None
    assert model.calls[3].tools is None  # no tools: the last call
    assert result.reason is not None and result.reason.value == "completed"
    assert result.final_text == FINAL
    (notice,) = events.of_type("system.notice")
    assert (notice["severity"], notice["text"]) == ("info", NOTHING_NEW)
    assert events.types().index("system.notice") < events.types().index("assistant.delta")
    finished = events.of_type("run.finished")[0]
    assert (finished["reason"], finished["failure_class"]) == ("completed", None)
    assert result.state.limit_hit is None


async def test_the_default_tree_keeps_searching_under_the_same_script():
    tools = knowledge_base(
        {"owls": [A, B], "owl diet": [B], "owl food": [A, B], "more": [C], "last": []}
    )

    result, model, events = await drive(
        create_tree("default", AgentConfig(max_iterations=10)),
        searches("owls", "owl diet", "owl food", "more", "last"),
        tools,
    )

    assert len(model.calls) == 6
    assert all(call.tools is not None for call in model.calls)
    assert events.of_type("system.notice") == []
    assert result.final_text == FINAL


async def test_a_new_passage_starts_the_count_again():
    tools = knowledge_base(
        {"owls": [A], "owl diet": [A], "owl prey": [A, C], "owl food": [], "more": [C, A]}
    )

    _, model, events = await drive(
        create_tree("deep_research", AgentConfig()),
        searches("owls", "owl diet", "owl prey", "owl food", "more"),
        tools,
    )

    # owls: new; owl diet: nothing new; owl prey: C is new; owl food and more: nothing new.
    assert len(model.calls) == 6
    assert model.calls[4].tools is not None and model.calls[5].tools is None
    assert [n["text"] for n in events.of_type("system.notice")] == [NOTHING_NEW]


async def test_a_failed_or_unreadable_search_counts_as_nothing_new():
    tools = knowledge_base({"owls": [A], "owl diet": "the index is being rebuilt"})

    def script(index: int, request: ModelRequest) -> Reply:
        if request.tools is None:
            return Reply(text=FINAL)
        if index == 0:
            return Reply(calls=[Call("search_documents", {"query": "owls"})])
        return Reply(calls=[Call("search_documents", {"query": "owl diet"})])

    result, model, events = await drive(create_tree("deep_research", AgentConfig()), script, tools)

    assert len(model.calls) == 4
    assert result.reason is not None and result.reason.value == "completed"
    assert [n["text"] for n in events.of_type("system.notice")] == [NOTHING_NEW]


async def test_other_tools_do_not_count_as_searches():
    tools = knowledge_base({"owls": [A], "owl diet": [A]})
    script = [
        Reply(calls=[Call("search_documents", {"query": "owls"})]),
        Reply(calls=[Call("lookup", {"topic": "owls"})]),
        Reply(calls=[Call("lookup", {"topic": "birds"})]),
        Reply(calls=[Call("search_documents", {"query": "owl diet"})]),
        Reply(text=FINAL),
    ]

    result, model, events = await drive(create_tree("deep_research", AgentConfig()), script, tools)

    assert len(model.calls) == 5
    assert all(call.tools is not None for call in model.calls)
    assert events.of_type("system.notice") == []
    assert result.final_text == FINAL


async def test_the_passages_seen_survive_a_save_and_load():
    tools = knowledge_base({"owls": [A, B], "owl diet": [B]})
    script = [
        Reply(calls=[Call("search_documents", {"query": "owls"})]),
        Reply(calls=[Call("search_documents", {"query": "owl diet"})]),
        Reply(text=FINAL),
    ]

    result, _, _ = await drive(create_tree("deep_research", AgentConfig()), script, tools)

    saved = AgentState.from_json(result.state.to_json())
    area = saved.extension("deep_research")
    assert area == result.state.extension("deep_research")
    assert sorted(map(tuple, area["seen"])) == [(1, 0), (1, 620)]
    assert area["searches_with_nothing_new"] == 1


async def test_nothing_new_on_the_last_allowed_call_still_ends_as_completed():
    # Deep research doubles 2 to 4: the fourth call is the last either way, and the
    # answer it brings is a finished one, not a stop at the iteration limit.
    tools = knowledge_base({"owls": [A], "owl diet": [A], "owl food": [A]})
    tree = skill_named("deep_research").tree(AgentConfig(max_iterations=2), OperatorLimits())

    result, model, events = await drive(tree, searches("owls", "owl diet", "owl food"), tools)

    assert len(model.calls) == 4
    assert model.calls[3].tools is None
    assert result.reason is not None and result.reason.value == "completed"
    assert result.final_text == FINAL
    assert NOTHING_NEW in [n["text"] for n in events.of_type("system.notice")]


async def test_after_a_continue_the_oracle_may_search_again():
    # Two fruitless searches fill the round (2 doubled to 4, pause at the limit): the
    # Continue lets the Oracle search on rather than answer at once.
    tools = knowledge_base({"owls": [A], "owl diet": [B], "owl food": [A], "more": [B]})
    tree = skill_named("deep_research").tree(
        AgentConfig(max_iterations=2, limit_action=LimitAction.PAUSE), OperatorLimits()
    )
    paused, _, _ = await drive(tree, searches("owls", "owl diet", "owl food", "more"), tools)
    assert paused.status.value == "paused"

    model = ScriptedModel([Reply(calls=[Call("lookup", {"topic": "owls"})]), Reply(text=FINAL)])
    events = EventCollector()
    deps = RunDeps(model=model, tree=tree, tools=tools)
    result = await continue_run(paused.state, deps, on_event=events)

    assert model.calls[0].tools is not None
    assert NOTHING_NEW not in [n["text"] for n in events.of_type("system.notice")]
    assert result.final_text == FINAL


def test_a_skill_is_a_frozen_value():
    skill = skill_named("default")
    assert isinstance(skill, Skill)
    with pytest.raises(AttributeError):
        skill.name = "other"  # type: ignore[misc]
