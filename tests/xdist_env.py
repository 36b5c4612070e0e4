"""Each pytest-xdist worker gets a world of its own, before Django reads its settings.

Loaded with `-p tests.xdist_env` (`make test` runs `python -m pytest -p tests.xdist_env
-n 2`), so that it runs as pytest parses its arguments, before pytest-django imports
the settings. In a worker (`PYTEST_XDIST_WORKER` is `gw0`, `gw1`...):

- `ORACLE_VAR_DIR` gets a folder of its own (`var/test/gw1`): its own embedded Redis,
  SQLite files, logs and knowledge files. Processes the tests start inherit it.
- A shared Redis (`REDIS_URL` set, as in CI's second round) gets its database number
  moved on by `REDIS_DB_STRIDE` a worker, so that the databases the suite's stacks
  count on from it (`tests.stack`) never meet another worker's.

Outside xdist (a plain `pytest`), nothing changes.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.redis_dbs import SUITE_REDIS_OFFSETS

REDIS_DB_STRIDE = 4
REDIS_DATABASES = 16


def _databases(base: int) -> set[int]:
    return {(base + offset) % REDIS_DATABASES for offset in SUITE_REDIS_OFFSETS}


def _moved_redis_url(url: str, worker: int) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        return url  # a unix socket of its own (the embedded Redis) is the worker's already
    first = int(parts.path.strip("/") or 0)
    taken: set[int] = set()
    for earlier in range(worker):
        taken |= _databases(first + earlier * REDIS_DB_STRIDE)
    base = first + worker * REDIS_DB_STRIDE
    if _databases(base) & taken:
        raise pytest.UsageError(
            f"A shared Redis has {REDIS_DATABASES} databases: too few for test worker "
            f"{worker + 1}'s. Run fewer workers (-n) with REDIS_URL set."
        )
    return urlunsplit(parts._replace(path=f"/{base % REDIS_DATABASES}"))


def _isolate(worker_id: str) -> None:
    worker = int(worker_id.removeprefix("gw"))
    var = Path(os.environ.get("ORACLE_VAR_DIR") or Path(__file__).parent.parent / "var")
    os.environ["ORACLE_VAR_DIR"] = str(var / worker_id)
    if url := os.environ.get("REDIS_URL"):
        os.environ["REDIS_URL"] = _moved_redis_url(url, worker)


if worker_id := os.environ.get("PYTEST_XDIST_WORKER"):
    _isolate(worker_id)
