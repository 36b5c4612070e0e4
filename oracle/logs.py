"""Where Oracle's logs go: everything to the console at the chosen level, and every limit
event of every run (logger oracle.limits, ops/limit_log.py) as JSON lines to a rotated
file and to stdout. No line carries a credential (`WithoutSecrets`)."""

from __future__ import annotations

import logging
import re
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

# An address's user and password, and its query and fragment, any of which may hold a secret.
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/@'\"<>]+@")
_QUERY = re.compile(r"(?P<address>://[^\s?#'\"<>]*)[?#][^\s'\"<>]*")
SHORTEST_SECRET = 4  # a shorter header value ("1") would blank every line it is in


class WithoutSecrets(logging.Filter):
    """Takes credentials out of a line before a handler writes it: any address's user,
    password, query and fragment, and every value of the MCP servers' headers and
    addresses (ORACLE_MCP_SERVERS), wherever a library put them (the SDK and its HTTP
    client log each address whole)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = without_secrets(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = without_secrets(record.exc_text)
        return True


def without_secrets(text: str) -> str:
    """`text` with every credential it holds replaced by ***."""
    text = _USERINFO.sub(r"\g<scheme>***@", text)
    text = _QUERY.sub(r"\g<address>?***", text)
    for secret in configured_secrets():
        text = text.replace(secret, "***")
    return text


@cache
def configured_secrets() -> tuple[str, ...]:
    """The credentials of the MCP configuration (read once a process), longest first."""
    from django.conf import settings

    from agents.mcp_config import load_mcp_config

    secrets: set[str] = set()
    for server in load_mcp_config(settings.ORACLE_MCP_SERVERS).servers:
        for value in server.headers.values():
            secrets |= {value, *value.split()}  # "Bearer TOKEN": the token alone too
        if server.url:
            address = urlsplit(server.url)
            secrets |= {address.username or "", address.password or "", address.fragment}
            secrets |= {value for _, value in parse_qsl(address.query)}
    return tuple(sorted((s for s in secrets if len(s) >= SHORTEST_SECRET), key=len, reverse=True))


def logging_config(limit_log_file: Path, *, level: str) -> dict[str, Any]:
    """LOGGING, with the limit events written to `limit_log_file`."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "json": {"()": "pythonjsonlogger.json.JsonFormatter", "timestamp": True},
        },
        "handlers": {
            "console": {"class": "logging.StreamHandler", "filters": ["without_secrets"]},
            "limits_file": {
                # The worker and the web side write it at once: a lock file keeps their
                # rotations apart (the standard library's handler lost lines doing it).
                "class": "concurrent_log_handler.ConcurrentRotatingFileHandler",
                "filename": str(limit_log_file),
                "maxBytes": 10 * 1024 * 1024,
                "backupCount": 5,
                "encoding": "utf-8",
                "delay": True,  # opened by the first line: most processes never write one
                "formatter": "json",
                "filters": ["without_secrets"],
            },
            "limits_stdout": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stdout",
                "formatter": "json",
                "filters": ["without_secrets"],
            },
        },
        "filters": {"without_secrets": {"()": WithoutSecrets}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "httpx": {"level": "WARNING"},
            # The MCP SDK's HTTP client: a line for every request.
            "httpx2": {"level": "WARNING"},
            "httpcore2": {"level": "WARNING"},
            "LiteLLM": {"level": "WARNING"},
            "oracle.limits": {
                "handlers": ["limits_file", "limits_stdout"],
                "level": "INFO",
                "propagate": False,
            },
        },
    }
