"""Skills: what a conversation asks of the Oracle, chosen when it starts (SPEC section 6).

A skill is a name the user picks, the limits it runs under (derived from the user's
own), the tools it may use, and the decision tree registered under its name. The
engine's loop is the same for every skill.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents import skill_trees  # noqa: F401  (registers the skills' own decision trees)
from agents.config import FIELDS_BY_NAME, AgentConfig, OperatorLimits
from agents.subagents import DELEGATE_TOOL
from agents.tree import DecisionTree, UnknownTreeError, create_tree

QUICK_ANSWER_ITERATIONS = 3
QUICK_ANSWER_TOOL_CALLS = 5


class UnknownSkillError(UnknownTreeError):
    """No skill has that name (a tree registered under it is not enough)."""


@dataclass(frozen=True)
class Skill:
    """One skill. Its limits come from the user's: multiplied (never past AgentConfig's
    bound or the operator's cap, never below the user's own) or capped (never raising
    the user's own lower values)."""

    name: str
    title: str
    description: str  # one line, shown where the skill is chosen
    can_delegate: bool = True
    iteration_multiplier: int = 1
    iteration_cap: int | None = None
    tool_call_cap: int | None = None

    def config(self, config: AgentConfig, operator: OperatorLimits) -> AgentConfig:
        """The limits a run of this skill works under, given the user's."""
        changes: dict[str, object] = {}
        if self.iteration_cap is not None:
            # Unlimited iterations included: a quick answer stays quick.
            changes["max_iterations"] = min(config.max_iterations, self.iteration_cap)
            changes["unlimited_iterations"] = False
        elif self.iteration_multiplier > 1 and not config.unlimited_iterations:
            bound = FIELDS_BY_NAME["max_iterations"].max
            assert bound is not None
            ceiling = min(int(bound), operator.max_iterations)
            more = min(config.max_iterations * self.iteration_multiplier, ceiling)
            changes["max_iterations"] = max(config.max_iterations, more)
        if self.tool_call_cap is not None:
            changes["max_tool_calls_per_turn"] = min(
                config.max_tool_calls_per_turn, self.tool_call_cap
            )
        changed = {k: v for k, v in changes.items() if getattr(config, k) != v}
        # Through AgentConfig's own validation: a skill never makes a config out of bounds.
        return AgentConfig.from_raw(changed, base=config) if changed else config

    def allows_tool(self, name: str) -> bool:
        """Whether a run of this skill is offered the tool called `name`."""
        return self.can_delegate or name != DELEGATE_TOOL

    def tree(self, config: AgentConfig, operator: OperatorLimits | None = None) -> DecisionTree:
        """The decision tree of a run of this skill, under this skill's limits."""
        operator = operator or OperatorLimits()
        return create_tree(self.name, self.config(config, operator), operator)


SKILLS: tuple[Skill, ...] = (
    Skill(
        "default",
        "Default",
        "Works with its tools within your own limits.",
    ),
    Skill(
        "deep_research",
        "Deep research",
        "Plans first, then searches with twice the iterations; may delegate; "
        "stops when searching finds nothing new.",
        iteration_multiplier=2,
    ),
    Skill(
        "quick_answer",
        "Quick answer",
        f"A short, direct answer: at most {QUICK_ANSWER_ITERATIONS} iterations and "
        f"{QUICK_ANSWER_TOOL_CALLS} tool calls, no delegation.",
        can_delegate=False,
        iteration_cap=QUICK_ANSWER_ITERATIONS,
        tool_call_cap=QUICK_ANSWER_TOOL_CALLS,
    ),
)
_BY_NAME = {skill.name: skill for skill in SKILLS}
DEFAULT_SKILL = _BY_NAME["default"]


def skills() -> list[Skill]:
    """The skills, in the order they are offered."""
    return list(SKILLS)


def skill_names() -> list[str]:
    """The skills' names, in the order they are offered."""
    return [skill.name for skill in SKILLS]


def skill_named(name: str) -> Skill:
    """The skill called `name`; `UnknownSkillError` naming the skills otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        known = ", ".join(skill_names())
        raise UnknownSkillError(f"unknown skill {name!r} (known: {known})") from None
