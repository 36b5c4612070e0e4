"""Subagents: the `delegate` tool hands a task to a helper agent (SPEC section 6).

A subagent runs the same loop with its own tools and the limits of its agent type,
and never more than the calling run has left: its time, token and cost caps are the
smaller of its type's and a share of the parent's headroom, so it cannot pass its
own limits however much budget the parent has, and the parent's limits bound it too.
Its tokens and cost count toward the parent's budgets as it spends them (after each
of its model calls). The parent's chat sees its steps and counters as `subagent.*`
events; its text does not stream there. Only its answer, once it has one, joins the
main chain (as the tool's result); when the parent stops first, the subagent is
cancelled with it and nothing it wrote is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from agents.agent_types import DEFAULT_AGENT_TYPES as DEFAULT_AGENT_TYPES
from agents.agent_types import AgentType as AgentType
from agents.config import AgentConfig, CallBounds, OperatorLimits
from agents.events import Event, EventType
from agents.loop import start_run
from agents.run.deps import RunDeps, ToolContext, tool_context
from agents.state import AgentState, TerminationReason, Usage
from agents.subagent_bounds import HelperTree, helper_at, place
from agents.tools import Tool, ToolError, ToolRegistry
from agents.wording import reason_label

DELEGATE_TOOL = "delegate"
MAIN_AGENT = "oracle"  # the agent type of a run's own work, beside its subagents'
MAX_TASK_LENGTH = 4_000
# The parent keeps this share of what it has left, to read the result and answer.
PARENT_RESERVE = 0.2
# Less than this left, and a subagent could not do anything useful.
MIN_SECONDS, MIN_TOKENS = 5.0, 1_000
# A subagent's tool results are shown in the parent's step this short.
SHOWN_RESULT_CHARS = 300

SUBAGENT_PROMPT = (
    "You are a {name} helping the Oracle, another assistant. {description} "
    "Work on the task you are given with the tools you have, then answer with what "
    "you found, briefly and with sources where you have them. The Oracle reads your "
    "answer, not the user."
)


class SubagentEvent:
    """The event types a delegation adds to its parent run's stream."""

    STARTED = "subagent.started"  # call_id, agent_type, task, limits
    STEP = "subagent.step"  # call_id, event: the subagent's tool call, result or notice
    PROGRESS = "subagent.progress"  # call_id, counters: what it has used so far
    FINISHED = "subagent.finished"  # call_id, agent_type, reason, label, counters


# Builds a subagent's dependencies (model, tree, tools) from its type, limits and caps.
DepsFactory = Callable[[AgentType, AgentConfig, OperatorLimits, ToolContext], RunDeps]


class Delegation:
    """The `delegate` tool over a set of agent types."""

    def __init__(
        self,
        agent_types: Sequence[AgentType],
        make_deps: DepsFactory,
        bounds: CallBounds | None = None,
    ) -> None:
        self.agent_types = {agent_type.name: agent_type for agent_type in agent_types}
        self.make_deps = make_deps
        # The run's helpers, its helpers' helpers included, within the operator's bounds.
        self.helpers = HelperTree(bounds or CallBounds())
        # Subagents at work now (a response may delegate several tasks at once): what
        # each may still spend is kept from the next one's share.
        self._working: list[_Child] = []

    def tool(self) -> Tool:
        """The tool to offer the model, its description listing the agent types."""

        async def delegate(agent_type: str, task: str) -> str:
            return await self.delegate(agent_type, task)

        kinds = "; ".join(f"{t.name}: {t.description}" for t in self.agent_types.values())
        delegate.__doc__ = (
            "Hand a self-contained task to a helper agent, which works on it with its own "
            f"tools and limits and returns its answer. Agent types: {kinds}\n\n"
            "Args:\n"
            f"    agent_type: One of {', '.join(self.agent_types)}.\n"
            "    task: What the helper should do, with all it needs to know.\n"
        )
        # A helper started again does no more than the first, unless a call of its may
        # have acted: that call marks this one begun, and it is not run again (tool_step).
        delegate.idempotent = True  # type: ignore[attr-defined]
        return Tool.from_function(delegate, name=DELEGATE_TOOL)

    async def delegate(self, agent_type: str, task: str) -> str:
        """Run a subagent of `agent_type` on `task` inside the calling run; its answer."""
        kind = self.agent_types.get(agent_type.strip())
        if kind is None:
            raise ToolError(
                f"unknown agent type {agent_type!r} (choose one of: {', '.join(self.agent_types)})"
            )
        task = task.strip()
        if not task:
            raise ToolError("the task is empty")
        if len(task) > MAX_TASK_LENGTH:
            raise ToolError(f"the task is longer than {MAX_TASK_LENGTH} characters")
        parent = tool_context()
        if parent is None:
            raise ToolError("delegate works only inside a run")
        # Its own limits, and the user's instructions, which its prompt carries too.
        config = replace(kind.config(), custom_instructions=parent.instructions)
        caps = self._caps(kind, parent)
        tree, depth = place(self.helpers)
        with helper_at(tree, depth):  # refused past the operator's bounds
            deps = self.make_deps(kind, config, caps, parent)
            if depth >= tree.bounds.subagents_max_depth:  # no helpers of its own
                tools = (tool for tool in deps.tools.tools() if tool.name != DELEGATE_TOOL)
                registry = ToolRegistry(tools, max_argument_bytes=deps.tools.max_argument_bytes)
                deps = replace(deps, tools=registry)
            child = _Child(parent, kind, caps)
            self._working.append(child)
            try:
                return await self._run(child, deps, task)
            finally:
                self._working.remove(child)

    async def _run(self, child: _Child, deps: RunDeps, task: str) -> str:
        parent, kind, caps = child.parent, child.kind, child.caps
        await parent.emit(
            SubagentEvent.STARTED,
            call_id=parent.call_id,
            agent_type=kind.name,
            task=task,
            limits=_shown_limits(kind, caps),
        )
        result = await start_run(
            task,
            deps,
            on_event=child.forward,
            on_checkpoint=child.checkpoint,
            system_prompt=SUBAGENT_PROMPT.format(name=kind.name, description=kind.description),
            run_id=f"{parent.run_id}:{parent.call_id}",
        )
        child.spend(result.state)
        reason = result.reason or TerminationReason.COMPLETED
        await parent.emit(
            SubagentEvent.FINISHED,
            call_id=parent.call_id,
            agent_type=kind.name,
            reason=reason.value,
            label=reason_label(reason),
            counters=result.state.counters(),
        )
        return _answer(kind, reason, result.state)

    def _caps(self, kind: AgentType, parent: ToolContext) -> OperatorLimits:
        """The subagent's hard caps: its type's limits, and a share of the parent's
        headroom (the parent keeps some to read the answer and reply)."""
        room = parent.headroom()
        share = 1 - PARENT_RESERVE
        # Time passes for all at once; tokens and cost are spent once.
        held_tokens = sum(child.unspent_tokens() for child in self._working)
        held_cost = sum(child.unspent_cost() for child in self._working)
        seconds, tokens, cost = (
            room.seconds * share,
            int((room.tokens - held_tokens) * share),
            (room.cost_usd - held_cost) * share,
        )
        if seconds < MIN_SECONDS or tokens < MIN_TOKENS or cost <= 0:
            raise ToolError(
                "too little of this run's budget is free to delegate "
                f"({room.seconds:.0f} s, {max(room.tokens - held_tokens, 0)} tokens, "
                f"${max(room.cost_usd - held_cost, 0):.4f}); answer with what you have"
            )
        return OperatorLimits(
            max_iterations=kind.max_iterations,
            max_tool_calls=kind.max_tool_calls,
            token_budget=min(kind.token_budget, tokens),
            timeout_seconds=min(kind.timeout_seconds, seconds),
            max_cost_usd=min(kind.max_cost_usd, cost),
        )


class _Child:
    """One subagent's link to its parent: its steps shown, its spending counted."""

    def __init__(self, parent: ToolContext, kind: AgentType, caps: OperatorLimits) -> None:
        self.parent = parent
        self.kind = kind
        self.caps = caps
        self.spent = Usage()

    def unspent_tokens(self) -> int:
        return max(self.caps.token_budget - self.spent.tokens, 0)

    def unspent_cost(self) -> float:
        return max(self.caps.max_cost_usd - self.spent.cost_usd, 0.0)

    async def forward(self, event: Event) -> None:
        """Show the subagent's steps in the parent's stream; never its text."""
        kind = event["type"]
        if kind == EventType.TOOL_CALL:
            shown = {"type": kind, "name": event["name"], "arguments": event["arguments"]}
        elif kind == EventType.TOOL_RESULT:
            content = str(event.get("content", ""))
            if len(content) > SHOWN_RESULT_CHARS:
                content = content[:SHOWN_RESULT_CHARS] + "…"
            shown = {"type": kind, "name": event["name"], "ok": event["ok"], "content": content}
        elif kind == EventType.SYSTEM_NOTICE:
            shown = {"type": kind, "severity": event["severity"], "text": event["text"]}
        elif kind == EventType.CONTEXT_COMPACTED:  # its own context, shortened to fit
            shown = {"type": EventType.SYSTEM_NOTICE, "severity": "info", "text": event["text"]}
        elif kind in (EventType.CONTEXT_REFUSED, EventType.TOOL_REFUSED):
            # The window the provider showed is the model's, whoever met it: the app
            # remembers it from the run's stream as it does the run's own. A call the
            # subagent made that was refused is counted in the limit log as the run's.
            fields = {k: v for k, v in event.items() if k not in ("type", "seq")}
            await self.parent.emit(kind, **fields)
            return
        else:
            return
        await self.parent.emit(SubagentEvent.STEP, call_id=self.parent.call_id, event=shown)

    async def checkpoint(self, state: AgentState) -> None:
        """Between the subagent's iterations: count what it spent, show its counters."""
        if self.spend(state):
            await self.parent.emit(
                SubagentEvent.PROGRESS, call_id=self.parent.call_id, counters=state.counters()
            )

    def spend(self, state: AgentState) -> bool:
        """Add what the subagent spent since the last time to the parent's budgets."""
        total = state.total
        new = Usage(
            prompt_tokens=total.prompt_tokens - self.spent.prompt_tokens,
            completion_tokens=total.completion_tokens - self.spent.completion_tokens,
            cost_usd=total.cost_usd - self.spent.cost_usd,
        )
        if not (new.prompt_tokens or new.completion_tokens or new.cost_usd):
            return False
        self.parent.spend(new)
        self.spent.add(new)
        return True


def _shown_limits(kind: AgentType, caps: OperatorLimits) -> dict[str, Any]:
    """The limits the subagent runs under: its type's, lowered by the parent's room."""
    return {
        **kind.limits(),
        "timeout_seconds": round(caps.timeout_seconds, 1),
        "token_budget": caps.token_budget,
        "max_cost_usd": round(caps.max_cost_usd, 6),
    }


def _answer(kind: AgentType, reason: TerminationReason, state: AgentState) -> str:
    """What the parent reads: the subagent's answer, and why it ended if not done."""
    text = state.final_text.strip()
    if reason is TerminationReason.COMPLETED:
        return text or f"The {kind.name} finished without an answer."
    hit = state.limit_hit
    figures = f" ({hit.value} of {hit.limit} {hit.metric})" if hit else ""
    ended = f"The {kind.name} stopped before finishing: {reason_label(reason)}{figures}."
    return f"{ended}\n\n{text}" if text else ended
