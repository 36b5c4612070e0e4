"""Django's Redis cache with one connection pool per process.

Django keeps a cache object per thread and, under ASGI, per request (its handler is
context-local), and each `RedisCache` makes its own connection pool: every request
that touched the cache (the rate limits on log-in and on API tokens) opened a new
Redis connection, and redis-py reads its own version from the installed package's
metadata for each new connection. Under load that was about a twentieth of the web
process's CPU (bench/README.md). Here every cache object of a process shares one
pool per server; redis-py's pool is thread-safe and starts afresh in a forked child.
They share one client per pool too: Django makes a new `Redis` object for every cache
call, and redis-py's constructor (its event dispatcher, its retry policy) cost about a
tenth of an API request's CPU in daphne (bench/README.md).
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_pools: dict[str, Any] = {}
_clients: dict[int, Any] = {}  # id(pool) -> the process's client on it
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

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        client = _clients.get(id(pool))
        if client is None:
            django_client: Any = self  # its `_client` class, which Django's stubs leave out
            with _lock:
                client = _clients.setdefault(id(pool), django_client._client(connection_pool=pool))
        return client


class SharedPoolRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedPoolClient
