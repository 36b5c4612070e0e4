"""The stable codes of a run: why it ended, whether a failure is worth retrying, where
it stands, and the quantities a limit can be set on. Events, rows and the API carry
them as their string values."""

from __future__ import annotations

from enum import StrEnum


class TerminationReason(StrEnum):
    """Why a run ended: the stable codes of SPEC section 4."""

    COMPLETED = "completed"
    CANCELLED = "cancelled"
    MAX_ITERATIONS = "max_iterations"
    TOKEN_BUDGET = "token_budget"
    TIMEOUT = "timeout"
    COST_BUDGET = "cost_budget"
    NO_PROGRESS = "no_progress"
    TOOL_ERRORS = "tool_errors"
    TOOL_BUDGET = "tool_budget"
    TOOL_BUDGET_VIOLATION = "tool_budget_violation"
    TURN_BUDGET_EXHAUSTED = "turn_budget_exhausted"
    PROVIDER_ERROR = "provider_error"
    INTERRUPTED = "interrupted"
    CONTEXT_WINDOW = "context_window"  # even shortened, the request cannot fit the window
    PAUSE_EXPIRED = "pause_expired"  # it waited on the user longer than the site allows


# The reasons that mean a limit ended the run (not the user, the provider, a lost worker
# or a wait on the user that expired), as the stored codes: the alerts and the staff
# dashboard count these.
LIMIT_REASONS = frozenset(
    reason.value
    for reason in TerminationReason
    if reason
    not in {
        TerminationReason.COMPLETED,
        TerminationReason.CANCELLED,
        TerminationReason.PROVIDER_ERROR,
        TerminationReason.INTERRUPTED,
        TerminationReason.PAUSE_EXPIRED,
    }
)


class FailureClass(StrEnum):
    """Whether a failed run is worth retrying automatically (only transient_infra is)."""

    DETERMINISTIC = "deterministic"
    TRANSIENT_INFRA = "transient_infra"


class RunStatus(StrEnum):
    """Where a run stands."""

    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"


class Metric(StrEnum):
    """The quantities a limit can be set on; used in notices and gauges."""

    ITERATIONS = "iterations"
    TOOL_CALLS = "tool_calls"
    TOKENS = "tokens"
    TIME = "time"
    COST = "cost"
    # Counted at the end of a run that no limit above ended: the figures of its notice.
    REPEATS = "repeats"  # the same steps over and over (no progress)
    TOOL_ERRORS = "tool_errors"  # failed tool calls in a row
    ATTEMPTS = "attempts"  # tries to reach the model
    SILENCE = "silence"  # seconds a worker stopped answering for
    CONTEXT = "context"  # tokens of a request against the model's context window
