"""Django's Redis cache with one connection pool per process.

Django keeps a cache object per thread and, under ASGI, per request (its handler is
context-local), and each `RedisCache` makes its own connection pool: every request
that touched the cache (the rate limits on log-in and on API tokens) opened a new
Redis connection, and redis-py reads its own version from the installed package's
metadata for each new connection. Under load that was about a twentieth of the web
process's CPU (bench/README.md). Here every cache object of a process shares one
pool per server; redis-py's pool is thread-safe and starts afresh in a forked child.
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_pools: dict[str, Any] = {}
_lock = threading.Lock()


class SharedPoolClient(RedisCacheClient):
    def _get_connection_pool(self, write: bool) -> Any:
        client: Any = self  # Django's private fields, which its stubs leave out
        server = client._servers[client._get_connection_pool_index(write)]
        pool = _pools.get(server)
        if pool is None:
            with _lock:
                pool = _pools.get(server)
                if pool is None:
                    pool = client._pool_class.from_url(server, **client._pool_options)
                    _pools[server] = pool
        return pool


class SharedPoolRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedPoolClient
