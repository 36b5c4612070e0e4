from __future__ import annotations

from celery import shared_task


@shared_task(name="ops.echo")
def echo(value: str) -> dict[str, str]:
    """Answer with what it was given: proves a round trip through broker and worker."""
    import socket

    return {"echo": value, "worker": socket.gethostname()}
