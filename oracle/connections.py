"""Where the database and Redis are: DATABASE_URL and REDIS_URL checked and read, or
SQLite and an embedded Redis server under the var folder; and Redis's URL as Celery
spells it."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

from ops.embedded_redis import EmbeddedRedisError, embedded_redis_for


def database(env: environ.Env, var_dir: Path) -> dict[str, object]:
    """DATABASES' default: DATABASE_URL checked and read, or SQLite under `var_dir`."""
    default = f"sqlite:///{var_dir / 'oracle.sqlite3'}"
    url = env.str("DATABASE_URL", default=default)
    scheme = urlsplit(url).scheme
    supported = ("sqlite", "postgres", "postgresql", "pgsql", "postgis")
    if scheme not in supported:
        raise ImproperlyConfigured(
            f"DATABASE_URL {url!r} is not a database URL Oracle supports. Use "
            "sqlite:////absolute/path/oracle.sqlite3 or "
            "postgres://USER:PASSWORD@HOST:5432/NAME."
        )
    try:
        config: dict[str, Any] = env.db_url_config(url)
    except (ValueError, KeyError) as error:
        raise ImproperlyConfigured(f"DATABASE_URL {url!r} could not be read: {error}") from error
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # Many concurrent writers (web + workers): wait for the lock, and WAL.
        config.setdefault("OPTIONS", {}).update(
            {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                # NORMAL is safe with WAL (no corruption; a power cut may lose the
                # last commits) and spares an fsync per commit.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            }
        )
        # Keep each thread's connection: opening one (and its PRAGMAs) for every
        # query was the largest cost of streaming under load.
        config.setdefault("CONN_MAX_AGE", None)
    else:
        # A pool per process (psycopg's): Django's ASGI handler runs each request's sync
        # code in a thread of its own, and with persistent connections every such thread
        # kept one: 200 streams at once took all 100 of PostgreSQL's connections. Past
        # the pool's size a request waits for a connection instead.
        config["CONN_MAX_AGE"] = 0  # the pool keeps the connections (Django checks them)
        config.setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": env.int("DATABASE_POOL_SIZE", default=20),
            "timeout": 30,
        }
    return config


def redis_url(configured: str, var_dir: Path) -> tuple[str, bool]:
    """The Redis URL to use (REDIS_URL's, else the embedded server's under `var_dir`), and
    whether this process started the embedded server."""
    if configured:
        if urlsplit(configured).scheme not in ("redis", "rediss", "unix"):
            raise ImproperlyConfigured(
                f"REDIS_URL {configured!r} is not a Redis URL "
                "(redis://HOST:6379/0, rediss://… or unix:///path/redis.sock)."
            )
        return configured, False
    embedded = embedded_redis_for(var_dir)
    try:
        started = embedded.ensure_running()
    except EmbeddedRedisError as error:
        raise ImproperlyConfigured(f"REDIS_URL is unset and {error}") from error
    return embedded.url(), started


def celery_url(redis_url: str) -> str:
    """Kombu and Celery spell a unix socket `redis+socket:///path?virtual_host=DB`."""
    parts = urlsplit(redis_url)
    if parts.scheme != "unix":
        return redis_url
    db = parse_qs(parts.query).get("db", ["0"])[0]
    return f"redis+socket://{parts.path}?virtual_host={db}"
