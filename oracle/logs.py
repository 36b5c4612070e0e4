"""Where Oracle's logs go: everything to the console at the chosen level, and every limit
event of every run (logger oracle.limits, ops/limit_log.py) as JSON lines to a rotated
file and to stdout."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def logging_config(limit_log_file: Path, *, level: str) -> dict[str, Any]:
    """LOGGING, with the limit events written to `limit_log_file`."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "json": {"()": "pythonjsonlogger.json.JsonFormatter", "timestamp": True},
        },
        "handlers": {
            "console": {"class": "logging.StreamHandler"},
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
            },
            "limits_stdout": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stdout",
                "formatter": "json",
            },
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "httpx": {"level": "WARNING"},
            "LiteLLM": {"level": "WARNING"},
            "oracle.limits": {
                "handlers": ["limits_file", "limits_stdout"],
                "level": "INFO",
                "propagate": False,
            },
        },
    }
