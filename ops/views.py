from __future__ import annotations

import queue
import threading

import redis
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import close_old_connections, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ops.heartbeat import live_worker_count, redis_client

DATABASE_DEADLINE_SECONDS = 3.0


def _query_database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any driver error means "down"
        return f"error: {error.__class__.__name__}: {error}".strip()
    finally:
        close_old_connections()  # a pooled connection goes back
    return "ok"


def _check_database() -> str:
    """The database's answer, or an error when none comes within a few seconds (a
    connection pool would otherwise wait 30 s for a database that is down)."""
    answers: queue.Queue[str] = queue.Queue()
    # A daemon thread: one still waiting must not keep the process from exiting.
    threading.Thread(target=lambda: answers.put(_query_database()), daemon=True).start()
    try:
        return answers.get(timeout=DATABASE_DEADLINE_SECONDS)
    except queue.Empty:
        return f"error: no answer within {DATABASE_DEADLINE_SECONDS:.0f} s"


@login_not_required
@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database and Redis answer; 503 naming the part that does not.

    `workers` counts Celery workers with a fresh heartbeat. With none, the web
    side still works (history, settings) but no run can start, so the status
    says `degraded` while the code stays 200.
    """
    database = _check_database()
    client = redis_client(timeout=1.0)
    try:
        client.ping()
        redis_status = "ok"
        workers = live_worker_count(client)
    except redis.RedisError as error:
        redis_status = f"error: {error.__class__.__name__}: {error}"
        workers = 0
    finally:
        client.close()
    failing = [
        name for name, value in (("database", database), ("redis", redis_status)) if value != "ok"
    ]
    body: dict[str, object] = {
        "status": "error" if failing else ("ok" if workers else "degraded"),
        "database": database,
        "redis": redis_status,
        "workers": workers,
    }
    if failing:
        body["failing"] = failing
    if settings.ORACLE_MCP_SERVERS and database == "ok":
        # Each MCP server's state as a worker last found it (the reasons are on the Tools
        # page and in the worker's log, not on this public page). A failed one is not a
        # failure of Oracle: runs go on without its tools.
        # With several workers, "ready" only when every live one has it ready, else the
        # worst; each worker's own state under mcp_workers, for the servers they disagree on.
        from toolbox.selectors import server_states, worker_states

        body["mcp_servers"] = server_states()
        if disagree := worker_states():
            body["mcp_workers"] = disagree
    return JsonResponse(body, status=503 if failing else 200)
