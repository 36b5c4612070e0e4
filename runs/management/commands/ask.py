"""`manage.py ask "question"`: one run of the Oracle in this process, from a terminal."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from argparse import ArgumentParser
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, transaction

from agents.config import AgentConfig, ConfigError, OperatorLimits
from agents.context.window import ContextWindow
from agents.events import EventType
from agents.mcp import McpHub
from agents.offline_model import OFFLINE_MODEL_NAME
from agents.skills import UnknownSkillError, skill_named, skill_names
from agents.state import TerminationReason
from agents.subagents import DEFAULT_AGENT_TYPES, DELEGATE_TOOL, AgentType
from agents.tools import ToolRegistry
from chat.models import UNSTORABLE, Run
from ops.caps import daily_cost_limits
from ops.models import SpendCaps
from runs.engine import engine_deps, model_for, remember_windows, window_for
from runs.management.terminal import JsonPrinter, TranscriptPrinter
from runs.runner import run_unattended
from runs.tools import run_tools
from settings_ui.policy import config_from_raw, effective_model
from settings_ui.selectors import subagent_types
from settings_ui.services import agent_config_for, operator_limits

# Flag -> AgentConfig field; every value is validated as the settings page validates it
# (AgentConfig's one declaration, and the operator's list of models).
FLAGS = {
    "model": "model",
    "max_iterations": "max_iterations",
    "soft_warning_percent": "soft_warning_percent",
    "token_budget": "token_budget",
    "token_warning_percent": "token_warning_percent",
    "context_compact_percent": "context_compact_percent",
    "timeout": "timeout_seconds",
    "max_tool_calls": "max_tool_calls_per_turn",
    "max_parallel_tools": "max_parallel_tools",
    "max_cost": "max_cost_usd",
    "limit_action": "limit_action",
    "extend_multiplier": "extend_multiplier",
    "max_extensions": "max_extensions",
    "no_progress_repeats": "no_progress_repeats",
    "max_consecutive_tool_errors": "max_consecutive_tool_errors",
    "instructions": "custom_instructions",
}
USAGE_ERROR = 2


class Command(BaseCommand):
    help = (
        "Ask the Oracle one question and print the run (exit 0 when it completed, "
        "1 when a limit or an error ended it, 2 for a bad flag)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("question", nargs="?", help="what to ask (not with --list-tools)")
        parser.add_argument("--json", action="store_true", help="one JSON event a line")
        parser.add_argument("--user", help="run as this user (must exist)")
        iterations = parser.add_mutually_exclusive_group()
        iterations.add_argument("--max-iterations", metavar="N")
        iterations.add_argument("--unlimited", action="store_true", help="no iteration limit")
        parser.add_argument("--soft-warning-percent", metavar="PCT")
        parser.add_argument("--token-budget", metavar="TOKENS")
        parser.add_argument("--token-warning-percent", metavar="PCT")
        parser.add_argument("--context-compact-percent", metavar="PCT")
        parser.add_argument("--timeout", metavar="SECONDS")
        parser.add_argument("--max-tool-calls", metavar="N")
        parser.add_argument("--max-parallel-tools", metavar="N")
        parser.add_argument("--max-cost", metavar="USD")
        parser.add_argument("--limit-action", metavar="stop|pause|extend|warn")
        parser.add_argument("--extend-multiplier", metavar="N")
        parser.add_argument("--max-extensions", metavar="N")
        parser.add_argument("--no-progress-repeats", metavar="N")
        parser.add_argument("--max-consecutive-tool-errors", metavar="N")
        parser.add_argument(
            "--instructions", metavar="TEXT", help="custom instructions for this run ('' for none)"
        )
        parser.add_argument("--skill", default="default", help=", ".join(skill_names()))
        parser.add_argument(
            "--model", help="one of ORACLE_MODELS (default: the user's choice, else ORACLE_MODEL)"
        )
        mcp = parser.add_mutually_exclusive_group()
        mcp.add_argument("--no-mcp", action="store_true", help="no MCP server's tools")
        mcp.add_argument(
            "--mcp-servers",
            metavar="NAME,...",
            help="only these MCP servers (of ORACLE_MCP_SERVERS)",
        )
        parser.add_argument(
            "--approve-all",
            action="store_true",
            help="run tool calls that need approval (without it they are declined)",
        )
        parser.add_argument(
            "--list-tools", action="store_true", help="list the tools a run may use, and exit"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list_tools"] == (options["question"] is not None):
            raise CommandError(
                "give a question, or --list-tools (not both)", returncode=USAGE_ERROR
            )
        user = _user(options["user"]) if options["user"] else None
        servers = _mcp_servers(user, options)
        try:
            skill = skill_named(options["skill"])
        except UnknownSkillError as error:
            raise CommandError(f"--skill: {error}", returncode=USAGE_ERROR) from None
        # The user's saved settings (defaults without --user), then the flags over them;
        # the operator's hard caps hold whoever runs it.
        config = _config_for(user, options)
        # The user's documents with --user; subagents as the skill allows.
        agent_types = _subagent_types() if skill.allows_tool(DELEGATE_TOOL) else []
        approve_all = options["approve_all"]

        def tools(hub: McpHub | None) -> ToolRegistry:
            user_id = user.pk if user is not None else None
            return run_tools(user_id=user_id, agent_types=agent_types, mcp=hub,
                             mcp_servers=servers, approve_all=approve_all)  # fmt: skip

        if options["list_tools"]:
            with contextlib.redirect_stdout(sys.stderr):
                listed = asyncio.run(_with_hub(servers, tools, _list))
            for line in listed:
                self.stdout.write(line)
            return
        model = model_for(effective_model(config))
        window = _window(model.name)
        refusals: list[dict[str, Any]] = []
        # The daily spending caps hold here too: the user's with --user, the site's always.
        # (What a run here spends is not kept, so it does not count toward them.)
        limits = _limits(user.pk if user is not None else None)
        printer = JsonPrinter(self.stdout) if options["json"] else TranscriptPrinter(self.stdout)

        async def ask(registry: ToolRegistry) -> TerminationReason | None:
            deps = engine_deps(
                model=model, tree=skill.tree(config, limits), tools=registry, window=window
            )

            async def on_event(event: dict[str, Any]) -> None:
                if event["type"] == EventType.CONTEXT_REFUSED:
                    refusals.append(event)
                await printer(event)

            result = await run_unattended(
                options["question"], deps, on_event=on_event, approve_all=approve_all
            )
            return result.state.termination_reason

        # Only events go to stdout; anything else printed during the run goes to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            reason = asyncio.run(_with_hub(servers, tools, ask))
        with contextlib.suppress(DatabaseError):  # no database: nothing to keep it in
            remember_windows(refusals)  # as a chat run's refusal is, for every run after
        if reason is not TerminationReason.COMPLETED:
            sys.exit(1)


T = TypeVar("T")


async def _with_hub(
    servers: list[str],
    tools: Callable[[McpHub | None], ToolRegistry],
    work: Callable[[ToolRegistry], Awaitable[T]],
) -> T:
    """Run `work` with the run's tools, the MCP servers started for it and closed after."""
    if not servers:
        return await work(tools(None))
    from toolbox.hub import new_hub

    hub = new_hub(only=servers)
    try:
        await hub.start()  # a server that does not start is logged, naming it and why
        return await work(tools(hub))
    finally:
        await hub.close()


async def _list(registry: ToolRegistry) -> list[str]:
    return [
        f"{tool.name}\t{tool.server or '-'}\t{'asks first' if tool.needs_approval else '-'}\t"
        f"{tool.description}"
        for tool in registry.tools()
    ]


def _mcp_servers(user: Any, options: dict[str, Any]) -> list[str]:
    """The MCP servers this run uses: none with --no-mcp, those --mcp-servers names,
    else those the user (with --user) has not switched off."""
    from toolbox.selectors import servers_enabled_for

    if options["no_mcp"]:
        return []
    if options["mcp_servers"] is None:
        return servers_enabled_for(user=user)
    enabled = servers_enabled_for(user=None)
    wanted = [name.strip() for name in options["mcp_servers"].split(",") if name.strip()]
    unknown = sorted(set(wanted) - set(enabled))
    if unknown or not wanted:
        raise CommandError(
            f"--mcp-servers: no enabled MCP server called {', '.join(unknown) or '(none)'} "
            f"(servers: {', '.join(enabled) or 'none'})",
            returncode=USAGE_ERROR,
        )
    return wanted


def _config_for(user: Any, options: dict[str, Any]) -> AgentConfig:
    """The flags over the user's saved settings (the defaults without a user). Refused
    flags store nothing: not even the defaults a user's first read stores."""
    if user is None:
        return _config_from_flags(options, None)
    with transaction.atomic():
        return _config_from_flags(options, agent_config_for(user=user))


def _shown(value: object, longest: int = 40) -> str:
    """A refused flag's value as its error quotes it: a long text cut short."""
    text = str(value)
    return text if len(text) <= longest else text[: longest - 1] + "\N{HORIZONTAL ELLIPSIS}"


def _config_from_flags(options: dict[str, Any], base: AgentConfig | None) -> AgentConfig:
    raw: dict[str, object] = {
        field: options[flag] for flag, field in FLAGS.items() if options[flag] is not None
    }
    if raw.get("model") == OFFLINE_MODEL_NAME and not settings.ORACLE_MODEL:
        raw["model"] = ""  # the built-in model by its name: the server default here
    if options["unlimited"]:
        raw["unlimited_iterations"] = True
    try:
        return config_from_raw(raw, base=base or AgentConfig())
    except ConfigError as error:
        by_field = {field: flag for flag, field in FLAGS.items()}
        lines = [
            f"--{by_field.get(field, field).replace('_', '-')}={_shown(raw.get(field))}: "
            + " ".join(msgs)
            for field, msgs in error.errors.items()
        ]
        raise CommandError("\n".join(lines), returncode=USAGE_ERROR) from None


def _limits(user_id: int | None) -> OperatorLimits:
    """The operator's caps, the cost cap lowered to what is left of today's spending
    caps; with no database to ask, the environment's caps with nothing spent."""
    try:
        return daily_cost_limits(operator_limits(), owner_id=user_id)
    except DatabaseError:
        return daily_cost_limits(
            operator_limits(), owner_id=None, runs=Run.objects.none(), caps=SpendCaps()
        )


def _window(model: str) -> ContextWindow | None:
    """The model's context window; with no database to ask, the operator's or LiteLLM's."""
    try:
        return window_for(model)
    except DatabaseError:
        return window_for(model, learned=False)


def _subagent_types() -> list[AgentType]:
    """The operator's subagent types; the built-in table with no database to ask."""
    try:
        return subagent_types()
    except DatabaseError:
        return list(DEFAULT_AGENT_TYPES)


def _user(username: str) -> Any:
    if UNSTORABLE.search(username):  # no name holds one, and the database refuses to look
        raise CommandError(f"--user: there is no user named {username!r}", returncode=USAGE_ERROR)
    try:
        user = get_user_model().objects.filter(username=username).first()
    except DatabaseError as error:
        message = f"--user: cannot look up {username!r} ({error}); run manage.py migrate"
        raise CommandError(message, returncode=USAGE_ERROR) from None
    if user is None:
        raise CommandError(f"--user: there is no user named {username!r}", returncode=USAGE_ERROR)
    return user
