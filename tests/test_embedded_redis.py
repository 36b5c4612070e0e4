"""Redis comes embedded when REDIS_URL is unset, and is left alone when it is set."""

from __future__ import annotations

from pathlib import Path

import redis

from ops.embedded_redis import EmbeddedRedis
from tests import processes


def redis_url_in_a_fresh_process(var_dir: Path, **env: str | None) -> str:
    code = "from django.conf import settings; print(settings.REDIS_URL)"
    result = processes.manage(
        "shell",
        "--no-imports",
        "-c",
        code,
        env=processes.base_env(ORACLE_VAR_DIR=str(var_dir), **env),
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_it_starts_a_real_redis_when_redis_url_is_unset(tmp_path: Path) -> None:
    embedded = EmbeddedRedis(tmp_path / "redis")
    try:
        url = redis_url_in_a_fresh_process(tmp_path, REDIS_URL=None)

        assert url == f"unix://{tmp_path}/redis/redis.sock?db=0"
        client = redis.Redis.from_url(url)
        client.set("oracle-test", "kept")
        assert client.get("oracle-test") == b"kept"
        assert processes.processes_mentioning(str(tmp_path / "redis" / "redis.sock"))
    finally:
        embedded.stop()

    assert not embedded.is_running()
    assert not processes.processes_mentioning(str(tmp_path / "redis" / "redis.sock"))


def test_it_reuses_the_running_embedded_redis(tmp_path: Path) -> None:
    embedded = EmbeddedRedis(tmp_path / "redis")
    try:
        redis_url_in_a_fresh_process(tmp_path, REDIS_URL=None)
        redis_url_in_a_fresh_process(tmp_path, REDIS_URL=None)

        servers = processes.processes_mentioning(str(tmp_path / "redis" / "redis.sock"))
        assert len(servers) == 1, servers
    finally:
        embedded.stop()


def test_it_starts_nothing_when_redis_url_is_set(tmp_path: Path) -> None:
    url = redis_url_in_a_fresh_process(tmp_path, REDIS_URL="redis://127.0.0.1:6390/3")

    assert url == "redis://127.0.0.1:6390/3"
    assert not (tmp_path / "redis").exists()
    assert not processes.processes_mentioning(str(tmp_path))
