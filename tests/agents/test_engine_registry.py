"""Decision trees are chosen by name; a skill can bring its own without touching the loop."""

from __future__ import annotations

import pytest

from agents.config import AgentConfig, OperatorLimits
from agents.events import EventCollector
from agents.loop import RunDeps, start_run
from agents.state import AgentState, TerminationReason
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tools import Tool, ToolRegistry, ToolResult
from agents.tree import (
    Decision,
    DecisionTree,
    DefaultDecisionTree,
    Stop,
    UnknownTreeError,
    create_tree,
    decision_tree,
    tree_names,
)


@decision_tree("two_sources")
class TwoSourcesTree(DefaultDecisionTree):
    """A research skill: stops as soon as two different sources were read."""

    def on_tool_result(self, state: AgentState, result: ToolResult) -> AgentState:
        state = super().on_tool_result(state, result)
        sources = state.extension("two_sources").setdefault("sources", [])
        if result.ok and result.content not in sources:
            sources.append(result.content)
        return state

    def should_continue(self, state: AgentState) -> Decision:
        if len(state.extension("two_sources").get("sources", [])) >= 2:
            return Stop(TerminationReason.COMPLETED)
        return super().should_continue(state)


def read(source: str) -> str:
    """Read a source.

    Args:
        source: Which one.
    """
    return f"text of {source}"


async def test_a_registered_tree_drives_the_run_by_its_name():
    tree: DecisionTree = create_tree("two_sources", AgentConfig())
    model = ScriptedModel([Reply(calls=[Call("read", {"source": s})]) for s in "abcdef"])
    deps = RunDeps(model=model, tree=tree, tools=ToolRegistry([Tool.from_function(read)]))
    events = EventCollector()

    result = await start_run("Research this", deps, on_event=events)

    assert result.reason is TerminationReason.COMPLETED
    assert len(model.calls) == 2  # the default tree would have gone on
    assert result.state.extension("two_sources")["sources"] == ["text of a", "text of b"]
    assert result.state.round.iterations == 2
    assert "two_sources" in tree_names() and "default" in tree_names()


def test_the_default_tree_is_registered_as_default():
    tree = create_tree("default", AgentConfig(max_iterations=7), OperatorLimits())
    assert isinstance(tree, DefaultDecisionTree)
    assert tree.get_config().max_iterations == 7


def test_an_unknown_skill_is_a_clear_error():
    with pytest.raises(UnknownTreeError, match="unknown skill 'nope'"):
        create_tree("nope", AgentConfig())


def test_a_name_cannot_be_taken_twice():
    with pytest.raises(ValueError, match="already registered"):

        @decision_tree("default")
        class Another(DefaultDecisionTree):
            pass
