"""What each agent type did: the main agent by skill, and each helper (subagent) type,
with the average and 95th percentile of its iterations, seconds and cost."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.skills import SKILLS
from agents.subagents import MAIN_AGENT
from dashboard.filters import ANY_LIMIT, run_list_url
from dashboard.periods import Period
from dashboard.tally import MICRO, Group
from settings_ui.models import AgentTypeLimits


@dataclass(frozen=True)
class Spread:
    """The average and the 95th percentile of one quantity over a group of runs."""

    average: float | None
    p95: float | None


@dataclass(frozen=True)
class AgentRow:
    agent_type: str
    skill: str
    label: str
    runs: int
    limit_hits: int
    iterations: Spread
    seconds: Spread
    cost: Spread
    total_cost: float
    href: str
    hits_href: str


def _spreads(group: Group) -> tuple[Spread, Spread, Spread]:
    """The average and 95th percentile of a group's iterations, seconds and cost."""
    if not group.runs:
        return Spread(None, None), Spread(None, None), Spread(None, None)
    p95_ms = group.elapsed_counts.percentile() or 0
    p95_cost = group.cost_counts.percentile() or 0
    return (
        Spread(group.iterations / group.runs, group.iteration_counts.percentile()),
        Spread(group.elapsed_ms / group.runs / 1000, p95_ms / 1000),
        Spread(group.cost / group.runs, p95_cost / MICRO),
    )


def skill_title(name: str) -> str:
    return next((skill.title for skill in SKILLS if skill.name == name), name)


def agent_rows(
    period: Period, skills: Mapping[str, Group], helpers: Mapping[str, Group]
) -> list[AgentRow]:
    rows = []
    names = [skill.name for skill in SKILLS]
    names += sorted(name for name in skills if name not in names)
    for name in names:
        label = f"Oracle · {skill_title(name)}"
        rows.append(_agent_row(period, skills.get(name), MAIN_AGENT, name, label, skill=name))
    types = sorted({*helpers, *AgentTypeLimits.objects.values_list("name", flat=True)})
    for name in types:
        rows.append(_agent_row(period, helpers.get(name), name, "", f"Helper · {name}", agent=name))
    return rows


def _agent_row(
    period: Period, group: Group | None, agent_type: str, of_skill: str, label: str, **runs: str
) -> AgentRow:
    """One agent type's (or skill's) row; `runs` filters the run list behind it."""
    group = group or Group()
    iterations, seconds, cost = _spreads(group)
    return AgentRow(
        agent_type=agent_type,
        skill=of_skill,
        label=label,
        runs=group.runs,
        limit_hits=group.limit_hits,
        iterations=iterations,
        seconds=seconds,
        cost=cost,
        total_cost=group.cost,
        href=run_list_url(period, **runs),
        hits_href=run_list_url(period, **runs, reason=ANY_LIMIT),
    )
