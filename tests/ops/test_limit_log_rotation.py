"""The limit log is written by several processes at once (the worker's, the web
side's): rotating it must lose and repeat no line. Tried with the handler settings.py
configures, made to rotate every few kilobytes."""

from __future__ import annotations

import json
import logging.config
import multiprocessing
from pathlib import Path
from typing import Any

from django.conf import settings

WRITERS = 4
LINES = 1_500


def _write(folder: str, writer: int) -> None:
    handler: dict[str, Any] = {
        **settings.LOGGING["handlers"]["limits_file"],
        "filename": str(Path(folder) / "limits.jsonl"),
        "maxBytes": 20_000,  # a rotation every hundred lines or so
        "backupCount": 10_000,  # none dropped: every line is still somewhere
    }
    logging.config.dictConfig(
        {
            "version": 1,
            "formatters": settings.LOGGING["formatters"],
            "filters": settings.LOGGING.get("filters", {}),  # the handler's, by name
            "handlers": {"file": handler},
            "loggers": {"rotation": {"handlers": ["file"], "level": "INFO"}},
        }
    )
    log = logging.getLogger("rotation")
    for number in range(LINES):
        log.info("limit event", extra={"writer": writer, "number": number, "pad": "x" * 100})


def test_processes_writing_at_once_lose_and_repeat_no_line_across_rotations(
    tmp_path: Path,
) -> None:
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_write, args=(str(tmp_path), n)) for n in range(WRITERS)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(120)
        assert process.exitcode == 0

    files = list(tmp_path.glob("limits.jsonl*"))
    lines = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    assert len(files) > 10  # it did rotate, many times
    written = sorted((line["writer"], line["number"]) for line in lines)
    assert written == [(w, n) for w in range(WRITERS) for n in range(LINES)]
