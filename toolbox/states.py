"""Each worker's state of each MCP server: written by the worker as it changes, read by
the pages, the API and `/healthz` (which start no server themselves).

Each worker runs its own servers, so they may disagree (one's server hung, another's
is fine). A server's one state is "ready" only when every live worker has it ready;
otherwise the worst any live worker has (`WORST_FIRST`), its rows kept for the detail.
A worker is live while its heartbeat is (ops.heartbeat); a dead worker's rows are left
out at once, and deleted by the next worker that writes.
"""

from __future__ import annotations

import logging
from typing import Any

import redis

from ops.heartbeat import live_workers, redis_client
from toolbox.models import McpServerStatus

logger = logging.getLogger(__name__)

# The worse a state, the earlier: what a server is said to be when workers disagree.
WORST_FIRST = ("failed", "restarting", "stopped", "starting", "ready")


def record_status(rows: list[dict[str, object]], tools: list[Any], worker: str = "") -> None:
    """Write `worker`'s row of each server (`rows`: `McpHub.status()`, `tools`: its
    `McpTool`s), and drop the rows of servers no longer configured and of dead workers."""
    for row in rows:
        name = str(row["name"])
        McpServerStatus.objects.update_or_create(
            worker=worker,
            name=name,
            defaults={
                "transport": str(row["transport"]),
                "state": str(row["state"]),
                "error": str(row["error"]),
                "problems": row["problems"],
                "tools": [
                    {
                        "name": tool.name,
                        "tool": tool.tool,
                        "description": tool.description,
                        "parameters": tool.input_schema,  # its share of each call's tokens
                        "approval": tool.needs_approval,
                        "why": tool.why,
                        "annotations": tool.annotations,
                        "grant": list(tool.grant),
                    }
                    for tool in tools
                    if tool.server == name
                ],
            },
        )
    McpServerStatus.objects.exclude(name__in=[row["name"] for row in rows]).delete()
    live = _live_workers()
    if live is not None:
        McpServerStatus.objects.exclude(worker__in=live | {worker, ""}).delete()


def live_rows() -> dict[str, list[McpServerStatus]]:
    """Each server's rows of the live workers (and of "", no worker), by server name."""
    live = _live_workers()
    found: dict[str, list[McpServerStatus]] = {}
    for row in McpServerStatus.objects.all():
        if live is None or row.worker in live or not row.worker:
            found.setdefault(row.name, []).append(row)
    return found


def one_state(rows: list[McpServerStatus]) -> str:
    """A server's state over the workers' rows: theirs when they agree, else the worst."""
    states = {row.state for row in rows}
    if len(states) == 1:
        return states.pop()
    return min(states, key=lambda s: WORST_FIRST.index(s) if s in WORST_FIRST else -1)


def disagreeing(rows: list[McpServerStatus]) -> dict[str, str]:
    """Each worker's state of a server, when the workers do not all say the same."""
    if len({row.state for row in rows}) < 2:
        return {}
    return {row.worker or "this process": row.state for row in rows}


def _live_workers() -> set[str] | None:
    """The live workers' names; None when Redis does not answer (then no row is left out)."""
    client = redis_client(timeout=1.0)
    try:
        return live_workers(client)
    except redis.RedisError:
        logger.warning("could not read the workers' heartbeats", exc_info=True)
        return None
    finally:
        client.close()
