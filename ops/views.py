from __future__ import annotations

import redis
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ops.heartbeat import live_worker_count, redis_client


def _check_database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any driver error means "down"
        return f"error: {error.__class__.__name__}: {error}".strip()
    return "ok"


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
    return JsonResponse(body, status=503 if failing else 200)
