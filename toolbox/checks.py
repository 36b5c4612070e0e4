"""The MCP configuration, checked whenever Django starts (serve, daphne, the worker,
manage.py check): each problem names the server and the reason. Warnings, not errors:
the other servers and the rest of Oracle work on. The exception is a sandbox required
(ORACLE_MCP_SANDBOX=bwrap) that cannot be had: then no stdio server starts."""

from __future__ import annotations

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from agents.mcp_sandbox import SANDBOX_MODES
from toolbox.hub import configured
from toolbox.sandbox import configured_sandbox


@checks.register()
def check_mcp_servers(**_: object) -> list[checks.CheckMessage]:
    return [checks.Warning(problem, id="oracle.W020") for problem in configured().problems]


@checks.register()
def check_mcp_sandbox(**_: object) -> list[checks.CheckMessage]:
    """Whether the stdio servers can be contained, and why not."""
    stdio = [s.name for s in configured().servers if s.transport == "stdio" and s.enabled]
    if not stdio and settings.ORACLE_MCP_SANDBOX in SANDBOX_MODES:
        return []
    try:
        sandbox, problem = configured_sandbox()
    except ImproperlyConfigured as error:
        return [checks.Error(str(error), id="oracle.E021")]
    named = ", ".join(stdio)
    if sandbox.refused:
        return [
            checks.Error(
                f"The stdio MCP servers ({named}) cannot start: {sandbox.refused}.",
                hint="Install bubblewrap (apt-get install bubblewrap) where it can create "
                "namespaces, or set ORACLE_MCP_SANDBOX=auto or none.",
                id="oracle.E022",
            )
        ]
    if problem and settings.ORACLE_MCP_SANDBOX == "auto":
        return [
            checks.Warning(
                f"The stdio MCP servers ({named}) run uncontained: {problem}. They can read "
                "Oracle's secrets (SECRET_KEY, provider keys) through /proc, and its "
                "database and files.",
                hint="Install bubblewrap (apt-get install bubblewrap) where it can create "
                "namespaces, or set ORACLE_MCP_SANDBOX=none to accept it.",
                id="oracle.W021",
            )
        ]
    return []
