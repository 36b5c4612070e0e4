"""Writes: a user switching an MCP server on or off for their runs."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from toolbox.hub import configured
from toolbox.models import ToolPreferences


class UnknownServer(ValueError):
    """No configured MCP server has that name."""


def server_switch(*, user: Any, name: str, enabled: bool) -> None:
    """Use (or stop using) the MCP server `name` in `user`'s runs."""
    if name not in {server.name for server in configured().servers}:
        raise UnknownServer(f"No MCP server is called {name!r}.")
    with transaction.atomic():
        prefs, _ = ToolPreferences.objects.select_for_update().get_or_create(user=user)
        off = set(prefs.disabled_servers)
        off.discard(name) if enabled else off.add(name)
        prefs.disabled_servers = sorted(off)
        prefs.save(update_fields=["disabled_servers"])
