"""Adaptive limits, as advice: for each agent type and skill, the iteration and token
limits that would have let 95% of its recently completed runs finish.

A recommendation is the nearest-rank 95th percentile of the completed runs' iterations
and tokens (tokens rounded up to a thousand), held within AgentConfig's bounds. Runs a
limit stopped are not in it: how much more they needed is unknown, so the page shows
how many there were beside it. Under `MIN_RUNS` completed runs there is no advice.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from agents.config import FIELDS_BY_NAME
from agents.skills import SKILLS, Skill
from agents.subagents import MAIN_AGENT
from dashboard.aggregates import Distribution
from dashboard.filters import run_list_url
from dashboard.periods import Period
from dashboard.tally import COMPLETED, Group
from settings_ui.models import AgentTypeLimits, SiteDefaults
from settings_ui.policy import operator_limits

MIN_RUNS = 20
TOKEN_STEP = 1_000


@dataclass(frozen=True)
class Limits:
    """An iteration limit and a token budget."""

    max_iterations: int
    token_budget: int


@dataclass(frozen=True)
class Recommendation:
    """One row of the recommendations table."""

    agent_type: str  # "oracle" (the main agent) or a subagent type
    skill: str  # the main agent's skill; "" for a subagent type
    label: str
    completed: int  # completed runs in the period
    stopped_at_iterations: int  # runs the iteration limit stopped (their need is unknown)
    stopped_at_tokens: int  # runs the token budget stopped
    current: Limits
    advised: Limits | None  # None: not enough completed runs
    # Where Apply writes (the site defaults, a subagent type), or why it cannot.
    applies_to: str
    note: str = ""
    href: str = ""  # the completed runs it comes from

    @property
    def can_apply(self) -> bool:
        return self.advised is not None and not self.note and self.advised != self.current


def advise(iterations: Distribution, tokens: Distribution) -> Limits | None:
    """The limits that would have let 95% of these completed runs finish (how many took
    each number of iterations and tokens), within AgentConfig's bounds; None under
    `MIN_RUNS` runs."""
    if iterations.total() < MIN_RUNS or tokens.total() < MIN_RUNS:
        return None
    most_iterations = iterations.percentile() or 1
    most_tokens = tokens.percentile() or 0
    return Limits(
        max_iterations=_bounded("max_iterations", most_iterations),
        token_budget=_bounded("token_budget", math.ceil(most_tokens / TOKEN_STEP) * TOKEN_STEP),
    )


def _bounded(name: str, value: int) -> int:
    spec = FIELDS_BY_NAME[name]
    assert spec.min is not None and spec.max is not None
    return int(min(max(value, spec.min), spec.max))


# --- the table: each skill of the main agent and each helper type -----------------


def recommendation_rows(
    period: Period, skills: Mapping[str, Group], helpers: Mapping[str, Group]
) -> list[Recommendation]:
    site = SiteDefaults.config()
    operator = operator_limits()
    rows = []
    for skill in SKILLS:
        config = skill.config(site, operator)
        group = skills.get(skill.name) or Group()
        rows.append(
            Recommendation(
                agent_type=MAIN_AGENT,
                skill=skill.name,
                label=f"Oracle · {skill.title}",
                completed=group.completed_iterations.total(),
                stopped_at_iterations=group.stopped_at_iterations,
                stopped_at_tokens=group.stopped_at_tokens,
                current=Limits(config.max_iterations, config.token_budget),
                advised=advise(group.completed_iterations, group.completed_tokens),
                applies_to="the settings new users start with",
                note=_skill_note(skill),
                href=run_list_url(period, skill=skill.name, reason=COMPLETED),
            )
        )
    for row in AgentTypeLimits.objects.order_by("name"):
        group, limits = helpers.get(row.name) or Group(), row.limits()
        rows.append(
            Recommendation(
                agent_type=row.name,
                skill="",
                label=f"Helper · {row.name}",
                completed=group.completed_iterations.total(),
                stopped_at_iterations=group.stopped_at_iterations,
                stopped_at_tokens=group.stopped_at_tokens,
                current=Limits(limits["max_iterations"], limits["token_budget"]),
                advised=advise(group.completed_iterations, group.completed_tokens),
                applies_to=f"the {row.name} subagent type",
                href=run_list_url(period, agent=row.name, reason=COMPLETED),
            )
        )
    return rows


def _skill_note(skill: Skill) -> str:
    """Why a skill's limits are not its own to change ("" when they are the defaults)."""
    if skill.iteration_cap is not None:
        return (
            f"{skill.title} caps iterations at {skill.iteration_cap}; its token budget is "
            "the default one."
        )
    if skill.iteration_multiplier > 1:
        return (
            f"{skill.title} runs get {skill.iteration_multiplier} times the default "
            "iterations (at most 50) and the default token budget."
        )
    return ""
