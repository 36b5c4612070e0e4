"""Reads: the tools a user's runs may use, and the MCP servers as the Tools page shows them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

from agents.mcp_config import McpServerConfig, shown_url
from runs.tools import run_tools
from toolbox.hub import configured
from toolbox.models import ToolPreferences
from toolbox.states import disagreeing, live_rows, one_state


def disabled_servers(*, user: Any) -> set[str]:
    """The MCP servers `user` switched off for their runs (none without a user)."""
    row = ToolPreferences.objects.filter(user=user).first() if user is not None else None
    return set(row.disabled_servers) if row else set()


def servers_enabled_for(*, user: Any) -> list[str]:
    """The configured, enabled MCP servers `user`'s runs use (all of them for None)."""
    off = disabled_servers(user=user)
    return [s.name for s in configured().servers if s.enabled and s.name not in off]


def servers(*, user: Any) -> list[dict[str, Any]]:
    """Every configured server: its state as the live workers found it (each worker's,
    in `workers`, when they disagree), its tools, and whether `user`'s runs use it."""
    found = live_rows()
    off = disabled_servers(user=user)
    rows = []
    for config in configured().servers:
        recorded = found.get(config.name, [])
        state = one_state(recorded) if recorded else None
        # Its tools as a worker that has it ready lists them; its error as the worst says.
        status = next((row for row in recorded if row.state == state), None)
        ready = next((row for row in recorded if row.state == "ready"), status)
        listed = ready.tools if ready else []
        rows.append(
            {
                "name": config.name,
                "transport": config.transport,
                "where": _shown_where(config),
                "asks": _asks(config),
                "state": _state(config, state),
                "workers": disagreeing(recorded) if config.enabled else {},
                "error": config.without_secrets(status.error) if status else "",
                "problems": status.problems if status else [],
                "tools": [tool | {"marks": _marks(tool)} for tool in listed],
                "approval": config.approval,
                "approve_tools": sorted(config.approve_tools),
                "timeout_seconds": config.timeout_seconds,
                "configured": config.enabled,
                "enabled": config.enabled and config.name not in off,
            }
        )
    return rows


def server_states() -> dict[str, str]:
    """Each configured server's state over the live workers, for `/healthz`: "ready" when
    every one has it ready, else the worst any has (`toolbox.states`)."""
    found = live_rows()
    return {
        config.name: _state(config, one_state(found[config.name]) if config.name in found else None)
        for config in configured().servers
    }


def worker_states() -> dict[str, dict[str, str]]:
    """Each worker's state of the servers the live workers disagree on, for `/healthz`."""
    found = live_rows()
    return {
        config.name: disagreeing(found[config.name])
        for config in configured().servers
        if config.enabled and disagreeing(found.get(config.name, []))
    }


def _state(config: McpServerConfig, recorded: str | None) -> str:
    """A server's state as a worker last recorded it; "disabled" when the file switches
    it off, "not started" before any worker reached it."""
    if not config.enabled:
        return "disabled"
    return recorded or "not started"


def _shown_where(config: McpServerConfig) -> str:
    """Where a server is, as any user may see it: the program's name, not its path or
    arguments; the address without credentials or query (either may hold a secret)."""
    if config.transport == "stdio":
        return Path(config.command).name
    return shown_url(config.url)


# The annotations a server gives its tools, as the Tools page words them (those set true).
MARKS = {"readOnlyHint": "read-only", "destructiveHint": "destructive",
         "idempotentHint": "idempotent", "openWorldHint": "open world"}  # fmt: skip


def _marks(tool: dict[str, Any]) -> list[str]:
    given = tool.get("annotations") or {}
    return [word for hint, word in MARKS.items() if given.get(hint) is True]


def _asks(config: McpServerConfig) -> str:
    if config.approval == "always":
        return "asks before every call"
    also = ", ".join(sorted(config.approve_tools))
    if config.approval == "auto":
        return "asks before each tool it does not mark read-only" + (f" and {also}" if also else "")
    if also:
        return "asks before " + also
    return "acts without asking"


def tools(*, user: Any) -> list[dict[str, Any]]:
    """Every tool `user`'s runs may use, built-in and MCP: name, description, server
    ("" for Oracle's own) and approval (whether a call waits for the user, unless
    they allowed it in the conversation); an MCP tool's own name, why it asks or not,
    and the annotations its server gave."""
    from settings_ui.selectors import subagent_types  # settings_ui reads chat's models

    builtin = run_tools(user_id=user.pk, agent_types=subagent_types())
    listed = [
        {"name": tool.name, "description": tool.description, "server": "", "approval": False}
        for tool in builtin.tools()
    ]
    if settings.ORACLE_MCP_SERVERS:
        for server in servers(user=user):
            if not server["enabled"] or server["state"] != "ready":
                continue
            listed.extend(
                {
                    "name": tool["name"],
                    "description": tool["description"],
                    "server": server["name"],
                    "tool": tool.get("tool", tool["name"]),
                    "approval": bool(tool["approval"]),
                    "why": tool.get("why", ""),
                    "annotations": tool.get("annotations", {}),
                }
                for tool in server["tools"]
            )
    return listed
