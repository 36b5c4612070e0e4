"""The sandbox this process starts its stdio MCP servers in (ORACLE_MCP_SANDBOX), with
Oracle's private paths hidden from them: `agents.mcp_sandbox` says how and why."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from agents.mcp_sandbox import Sandbox, sandbox_for

logger = logging.getLogger(__name__)

# Where PostgreSQL's unix socket is on Debian (a server could connect through it as
# Oracle's user, with peer authentication and no password).
POSTGRESQL_SOCKETS = ("/run/postgresql", "/var/run/postgresql")


@cache
def configured_sandbox() -> tuple[Sandbox, str]:
    """The sandbox (bubblewrap tried once a process), and why stdio servers run
    uncontained ("" when they do not). Raises ImproperlyConfigured for a bad setting."""
    folders, files = private_paths()
    try:
        sandbox, problem = sandbox_for(
            settings.ORACLE_MCP_SANDBOX, hidden_folders=folders, hidden_files=files
        )
    except ValueError as error:
        raise ImproperlyConfigured(str(error)) from error
    if problem and settings.ORACLE_MCP_SANDBOX == "auto":
        logger.warning("MCP stdio servers run uncontained: %s", problem)
    return sandbox, problem


def private_paths() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The folders and files of Oracle's that no stdio server may read (those that exist):
    the var folder (SQLite database, secret key file, embedded Redis's socket, logs),
    PostgreSQL's socket folder, `.env`, the MCP configuration (every server's
    credentials), a SQLite database or Redis socket elsewhere."""
    folders = [Path(settings.VAR_DIR), *map(Path, POSTGRESQL_SOCKETS)]
    files = [Path(settings.BASE_DIR) / ".env"]
    if settings.ORACLE_MCP_SERVERS:
        files.append(Path(settings.ORACLE_MCP_SERVERS))
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        name = str(database["NAME"])
        files += [Path(name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
    elif str(database.get("HOST", "")).startswith("/"):
        folders.append(Path(str(database["HOST"])))
    if urlsplit(settings.REDIS_URL).scheme == "unix":
        files.append(Path(urlsplit(settings.REDIS_URL).path))
    return _existing(folders, Path.is_dir), _existing(files, _is_file)


def _is_file(path: Path) -> bool:
    return path.exists() and not path.is_dir()  # a socket too


def _existing(paths: list[Path], exists: Callable[[Path], bool]) -> tuple[str, ...]:
    resolved = [Path(path).resolve() for path in paths]
    return tuple(dict.fromkeys(str(path) for path in resolved if exists(path)))
