"""How long a run may wait on its user (a tool call to approve, a pause at a limit)
before a worker's sweeper ends it `pause_expired` (`runs.expiry`):
ORACLE_PAUSE_EXPIRY_SECONDS, a day unless set; 0: a pause waits for ever."""

from __future__ import annotations

import math

import environ
from django.core.exceptions import ImproperlyConfigured

DEFAULT = 24 * 3600.0


def pause_expiry(env: environ.Env) -> float:
    """The expiry in seconds; anything but a number of seconds, 0 or more, is refused."""
    raw = env.str("ORACLE_PAUSE_EXPIRY_SECONDS", default=str(DEFAULT))
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds < math.inf:
        raise ImproperlyConfigured(
            f"ORACLE_PAUSE_EXPIRY_SECONDS must be a number of seconds, 0 or more "
            f"(0: a paused run waits for ever), not {raw!r}."
        )
    return seconds
