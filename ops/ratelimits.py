"""Rate limits on the doors a stranger can knock on: log-in (per address and per
username), sign-up (per address) and API tokens that are not ours (per address).
Counted in the shared cache (Redis) with django-ratelimit, so every web process
counts together; over a limit the answer is a 429 that says when to try again.

The rates are settings (`ORACLE_RATE_LOGIN`, …, in django-ratelimit's "5/m" form).
Behind a proxy, the address is the one daphne reads from X-Forwarded-For when it runs
with `--proxy-headers` (as the README's server section says).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django_ratelimit import core as ratelimit
from django_ratelimit.core import get_usage
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)
ALL_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


def over_limit(request: HttpRequest, name: str, key: Any, *, count: bool = True) -> int | None:
    """Count this request against limit `name` (a key of ORACLE_RATE_LIMITS) for `key`
    ("ip", or a function of the request) unless `count` is off; the seconds until it
    may try again when it is over the limit, else None."""
    if not count:
        return _peek(request, name, key)
    try:
        usage = get_usage(
            request,
            group=f"oracle.{name}",
            key=key,
            rate=settings.ORACLE_RATE_LIMITS[name],
            method=ALL_METHODS,
            increment=count,
        )
    except (RedisError, OSError):  # Redis is away: let people in, not lock them all out
        logger.warning("rate limit %s not counted: the cache is unreachable", name)
        return None
    if usage is None:
        return None
    # Counted, this request is one of them; only looked at, the next would be one more.
    if not (usage["should_limit"] if count else usage["count"] >= usage["limit"]):
        return None
    return max(1, int(usage["time_left"]))


def _peek(request: HttpRequest, name: str, key: Any) -> int | None:
    """`over_limit` without counting, in one cache read: django-ratelimit's `get_usage`
    makes two (an `add` of the key, then a `get`), and the API looks before every
    bearer request (a tenth of the web process's CPU under load, bench/README.md).
    The key is django-ratelimit's own, made by its own functions."""
    group, rate = f"oracle.{name}", settings.ORACLE_RATE_LIMITS[name]
    if not getattr(settings, "RATELIMIT_ENABLE", True) or rate is None:
        return None
    limit, period = ratelimit._split_rate(rate)
    value = key(group, request) if callable(key) else ratelimit._SIMPLE_KEYS[key](request)
    window: int = ratelimit._get_window(value, period)
    cache_key = ratelimit._make_cache_key(group, window, rate, value, ALL_METHODS)
    try:
        used = caches[getattr(settings, "RATELIMIT_USE_CACHE", "default")].get(cache_key, 0)
    except (RedisError, OSError):
        logger.warning("rate limit %s not read: the cache is unreachable", name)
        return None
    if used < limit:
        return None
    return max(1, window - int(time.time()))


def too_many(request: HttpRequest, retry_after: int, *, api: bool = False) -> HttpResponse:
    """A 429 that says when to try again (and says it in Retry-After)."""
    message = f"Too many attempts. Try again in {_duration(retry_after)}."
    if api:
        response: HttpResponse = JsonResponse(
            {"error": message, "retry_after": retry_after}, status=429
        )
    else:
        response = render(request, "ops/too_many.html", {"message": message}, status=429)
    response["Retry-After"] = str(retry_after)
    return response


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    return f"{-(-seconds // 60)} minutes"
