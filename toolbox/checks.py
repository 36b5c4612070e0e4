"""The MCP configuration, checked whenever Django starts (serve, daphne, the worker,
manage.py check): each problem names the server and the reason. Warnings, not errors:
the other servers and the rest of Oracle work on."""

from __future__ import annotations

from django.core import checks

from toolbox.hub import configured


@checks.register()
def check_mcp_servers(**_: object) -> list[checks.CheckMessage]:
    return [checks.Warning(problem, id="oracle.W020") for problem in configured().problems]
