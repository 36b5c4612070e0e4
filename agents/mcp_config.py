"""MCP server configuration: the common `mcpServers` JSON shape, checked key by key.

The shape is the one Claude Desktop, Cursor and LibreChat read:
`{"mcpServers": {"NAME": {"command": ..., "args": [...], "env": {...}}}}` for a
server Oracle starts (stdio), `{"url": ..., "headers": {...}}` for one it reaches
(Streamable HTTP; `"transport": "sse"` for the older SSE transport). Oracle's own
keys, each optional: `approval` ("auto", the default: ask before every tool not
annotated read-only, see `agents.mcp_consent`; "never"; "always"), `approve_tools`
(tools that need approval even under "never"), `max_calls_per_run` (a number for all
the server's tools together, or an object of numbers by tool name, "*" for all),
`timeout_seconds` (a per-call ceiling) and `enabled`. A problem in one server's entry
names the server and leaves the others usable; a file that cannot be read at all gives
one problem and no servers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

DEFAULT_TIMEOUT_SECONDS = 60.0
MAX_TIMEOUT_SECONDS = 24 * 3600.0
# The characters OpenAI-style function names allow, and their length.
TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SERVER_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
SEPARATOR = "__"

_STDIO_KEYS = {"command", "args", "env", "cwd"}
_REMOTE_KEYS = {"url", "headers", "transport"}
_ORACLE_KEYS = {"approval", "approve_tools", "max_calls_per_run", "timeout_seconds", "enabled"}
MAX_CALLS_PER_RUN = 10_000  # the largest max_calls_per_run a file may give
ALL_TOOLS = "*"  # in a max_calls_per_run object: every tool of the server together
# Keys other clients write that mean nothing to Oracle and harm nothing.
_IGNORED_KEYS = {"type", "description", "disabled", "alwaysAllow", "autoApprove"}

Transport = Literal["stdio", "http", "sse"]


@dataclass(frozen=True)
class McpServerConfig:
    """One server of the file, as Oracle will run or reach it."""

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    approval: Literal["auto", "never", "always"] = "auto"
    approve_tools: frozenset[str] = frozenset()
    # Calls a run may make: by tool name, ALL_TOOLS for the server's tools together.
    max_calls_per_run: dict[str, int] = field(default_factory=dict)
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    enabled: bool = True

    @property
    def where(self) -> str:
        """What the server is, in a few words, for logs (its address without secrets)."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])[:200]
        return shown_url(self.url)

    def without_secrets(self, text: str) -> str:
        """`text` with a remote server's address shown as `shown_url` gives it."""
        return text.replace(self.url, shown_url(self.url)) if self.url else text


def shown_url(url: str) -> str:
    """An address as logs and pages show it: without the user, password, query or
    fragment, any of which may hold a secret."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is not a number: show none
        port = ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"


@dataclass(frozen=True)
class McpConfig:
    """The servers a file names (each usable on its own) and the problems found in it."""

    servers: tuple[McpServerConfig, ...] = ()
    problems: tuple[str, ...] = ()


def load_mcp_config(path: str) -> McpConfig:
    """Read and check the file at `path` ("" for none)."""
    if not path:
        return McpConfig()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return McpConfig(problems=(f"ORACLE_MCP_SERVERS: cannot read {path}: {error}",))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return McpConfig(problems=(f"ORACLE_MCP_SERVERS: {path} is not JSON: {error}",))
    return parse_mcp_config(data, source=path)


def parse_mcp_config(data: object, *, source: str = "the MCP configuration") -> McpConfig:
    """Check a decoded `mcpServers` document."""
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        return McpConfig(problems=(f'{source}: expected an object with an "mcpServers" object',))
    unknown_top = sorted(set(data) - {"mcpServers"})
    problems = [f'{source}: unknown key {key!r} (only "mcpServers")' for key in unknown_top]
    servers: list[McpServerConfig] = []
    for name, entry in data["mcpServers"].items():
        try:
            servers.append(_server(name, entry))
        except ValueError as error:
            problems.append(f"MCP server {name!r}: {error}")
    return McpConfig(tuple(servers), tuple(problems))


def _server(name: str, entry: object) -> McpServerConfig:
    if not SERVER_NAME_PATTERN.match(name) or SEPARATOR in name:
        raise ValueError(
            "a server's name is 1 to 32 letters, digits, '_' or '-' "
            f"(no {SEPARATOR!r}): its tools are named <server>{SEPARATOR}<tool>"
        )
    if not isinstance(entry, dict):
        raise ValueError("expected an object")
    unknown = sorted(set(entry) - _STDIO_KEYS - _REMOTE_KEYS - _ORACLE_KEYS - _IGNORED_KEYS)
    if unknown:
        raise ValueError(f"unknown key(s): {', '.join(unknown)}")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise ValueError('give either "command" (a server Oracle starts) or "url" (one it reaches)')
    common = _oracle_keys(entry)
    if has_command:
        if stray := sorted(set(entry) & _REMOTE_KEYS):
            raise ValueError(f"{', '.join(stray)} belong(s) to a server reached by url")
        return McpServerConfig(
            name=name,
            transport="stdio",
            command=_text(entry, "command"),
            args=tuple(_strings(entry.get("args", []), "args")),
            env=_mapping(entry.get("env", {}), "env"),
            cwd=_text(entry, "cwd") if "cwd" in entry else None,
            **common,
        )
    if stray := sorted(set(entry) & _STDIO_KEYS):
        raise ValueError(f"{', '.join(stray)} belong(s) to a server started by command")
    url = _text(entry, "url")
    if not re.match(r"^https?://[^\s/]+", url):
        raise ValueError(f"url must be an http:// or https:// address, not {url!r}")
    transport = entry.get("transport", "http")
    if transport not in ("http", "sse"):
        raise ValueError(f'transport must be "http" (Streamable HTTP) or "sse", not {transport!r}')
    return McpServerConfig(
        name=name,
        transport=transport,
        url=url,
        headers=_mapping(entry.get("headers", {}), "headers"),
        **common,
    )


def _oracle_keys(entry: dict[str, Any]) -> dict[str, Any]:
    approval = entry.get("approval", "auto")
    if approval not in ("auto", "never", "always"):
        raise ValueError(f'approval must be "auto", "never" or "always", not {approval!r}')
    timeout = entry.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT_SECONDS
    ):
        raise ValueError(
            f"timeout_seconds must be a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT_SECONDS:.0f}, not {timeout!r}"
        )
    enabled = entry.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValueError(f"enabled must be true or false, not {enabled!r}")
    if entry.get("disabled") is True:  # Claude Desktop's spelling
        enabled = False
    return {
        "approval": approval,
        "approve_tools": frozenset(_strings(entry.get("approve_tools", []), "approve_tools")),
        "max_calls_per_run": _max_calls(entry.get("max_calls_per_run", {})),
        "timeout_seconds": float(timeout),
        "enabled": enabled,
    }


def _max_calls(value: object) -> dict[str, int]:
    """`max_calls_per_run`: a number (the server's tools together) or numbers by tool."""
    if not isinstance(value, dict):
        value = {ALL_TOOLS: value}
    limits = {}
    for tool, limit in value.items():
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 1 <= limit <= MAX_CALLS_PER_RUN
        ):
            raise ValueError(
                f"max_calls_per_run must be a whole number from 1 to {MAX_CALLS_PER_RUN:,} "
                f"(or an object of such numbers by tool name), not {limit!r}"
            )
        limits[str(tool)] = limit
    return limits


def _text(entry: dict[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise ValueError(f"{key} must be a non-empty string")
    return value


def _strings(value: object, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and "\0" not in v for v in value):
        raise ValueError(f"{key} must be a list of strings")
    return list(value)


def _mapping(value: object, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and "\0" not in k + v for k, v in value.items()
    ):
        raise ValueError(f"{key} must be an object of strings")
    return dict(value)
