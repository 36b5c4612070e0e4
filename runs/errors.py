"""What a run service refuses with: bad input (nothing changed) or a request that does
not fit the run's current state (HTTP 409)."""

from __future__ import annotations


class InvalidInput(ValueError):
    """Bad input from a user: the message says what is wrong, nothing was changed."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))


class RunConflict(Exception):
    """The request does not fit the run's (or conversation's) current state: HTTP 409."""
