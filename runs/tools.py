"""The tools a run offers the model: the built-in ones, the operator's (ORACLE_TOOLS),
the user's documents, `delegate` to the subagent types, and the MCP servers' tools:
one list."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import cache, partial

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from agents.builtin_tools import builtin_tools
from agents.config import AgentConfig, CallBounds, OperatorLimits
from agents.mcp import McpHub
from agents.mcp_consent import Grant
from agents.run.deps import RunDeps, ToolContext
from agents.subagents import DEFAULT_AGENT_TYPES, AgentType, Delegation
from agents.tools import Tool, ToolRegistry
from agents.tree import create_tree
from runs.engine import engine_deps


def builtin_names() -> list[str]:
    """The names of every tool that is not an MCP server's (MCP tools take others): a
    run's registry with documents and `delegate`, without MCP."""
    return run_tools(user_id=0, agent_types=DEFAULT_AGENT_TYPES).names()


def run_tools(
    *,
    user_id: int | None = None,
    agent_types: Sequence[AgentType] = (),
    mcp: McpHub | None = None,
    mcp_servers: Collection[str] | None = None,
    grants: Collection[Grant] = (),
    approve_all: bool = False,
) -> ToolRegistry:
    """A registry for one run: the built-in tools, those named in ORACLE_TOOLS, the
    user's documents (with a user), `delegate` when there are agent types, and the
    tools of `mcp`'s ready servers (of `mcp_servers` only, when given). An MCP tool
    needs approval as its server's config and annotations say, unless `approve_all` or
    `grants` holds it (the conversation's "Always allow", bound to the server, the
    tool's own name and its schema: never to the name the model sees)."""
    registry = ToolRegistry(
        builtin_tools().tools(), max_argument_bytes=settings.ORACLE_TOOL_ARGUMENTS_MAX_BYTES
    )
    for tool in _extra_tools(tuple(settings.ORACLE_TOOLS)):
        registry.add(tool)
    if user_id is not None:
        from knowledge.tools import document_tools  # the knowledge app reads chat's users

        for tool in document_tools(user_id):
            registry.add(tool)
    if agent_types:
        subagent_deps = partial(_subagent_deps, user_id=user_id, mcp=mcp, mcp_servers=mcp_servers,
                                agent_types=agent_types)  # fmt: skip
        registry.add(Delegation(agent_types, subagent_deps, call_bounds()).tool())
    if mcp is not None:
        servers = None if mcp_servers is None else set(mcp_servers)
        for offered in mcp.tools(servers=servers):
            needs = offered.needs_approval and not approve_all and offered.grant not in grants
            registry.add(mcp.tool(offered, needs_approval=needs))
    return registry


def _subagent_deps(
    kind: AgentType,
    config: AgentConfig,
    caps: OperatorLimits,
    parent: ToolContext,
    *,
    user_id: int | None,
    mcp: McpHub | None = None,
    mcp_servers: Collection[str] | None = None,
    agent_types: Sequence[AgentType] = (),
) -> RunDeps:
    """A subagent works with its parent's model and clock, the default tree under its own
    limits and caps, and the same tools but the MCP tools that need approval (only the
    run itself can wait for the user); `delegate` too, which the engine takes away where
    helpers may not start helpers (ORACLE_SUBAGENTS_MAX_DEPTH, 1 by default)."""
    tools = run_tools(user_id=user_id, mcp=mcp, mcp_servers=mcp_servers, agent_types=agent_types)
    kept = (tool for tool in tools.tools() if not tool.needs_approval)
    return engine_deps(
        model=parent.model,
        tree=create_tree("default", config, caps),
        tools=ToolRegistry(kept, max_argument_bytes=tools.max_argument_bytes),
        clock=parent.clock,
        window=parent.window,  # its own context, kept the same way, in the same window
    )


def call_bounds() -> CallBounds:
    """The operator's bounds on one tool call and on a run's helpers (settings)."""
    return CallBounds(
        tool_arguments_max_bytes=settings.ORACLE_TOOL_ARGUMENTS_MAX_BYTES,
        subagents_max_per_run=settings.ORACLE_SUBAGENTS_MAX_PER_RUN,
        subagents_max_depth=settings.ORACLE_SUBAGENTS_MAX_DEPTH,
        subagents_max_concurrent=settings.ORACLE_SUBAGENTS_MAX_CONCURRENT,
    )


@cache
def _extra_tools(paths: tuple[str, ...]) -> list[Tool]:
    return [Tool.from_function(import_string(path)) for path in paths]


@checks.register()
def check_tools(**_: object) -> list[checks.CheckMessage]:
    """Every ORACLE_TOOLS entry names a function that makes a tool, with a new name."""
    errors: list[checks.CheckMessage] = []
    names = set(builtin_tools().names())
    for path in settings.ORACLE_TOOLS:
        try:
            tool = Tool.from_function(import_string(path))
        except Exception as error:  # an import error, or a signature no tool can have
            message = f"ORACLE_TOOLS entry {path!r} is not a usable tool: {error}"
            errors.append(checks.Error(message, id="oracle.E010"))
            continue
        if tool.name in names:
            message = f"ORACLE_TOOLS entry {path!r}: a tool named {tool.name!r} exists already"
            errors.append(checks.Error(message, id="oracle.E011"))
        names.add(tool.name)
    return errors
