"""AgentState: everything a run knows about itself, serialisable to JSON.

The state is kept apart from the run's dependencies (model, tools, limits) so a
paused or interrupted run can be saved and continued by another process. Its codes
(`agents.codes`) and its limit hit (`agents.limit_hit`) are importable from here too.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from agents.codes import LIMIT_REASONS as LIMIT_REASONS
from agents.codes import FailureClass as FailureClass
from agents.codes import Metric as Metric
from agents.codes import RunStatus as RunStatus
from agents.codes import TerminationReason as TerminationReason
from agents.context.ledger import ContextLedger
from agents.limit_hit import CAP_NOTE_SEPARATOR as CAP_NOTE_SEPARATOR
from agents.limit_hit import LimitHit as LimitHit
from agents.limit_hit import exact as exact
from agents.model import ModelProblem


@dataclass
class Usage:
    """Counters of a run (or of one round of it). Child (subagent) usage adds in."""

    iterations: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        """Add another usage (e.g. a subagent's tokens and cost) into this one."""
        self.iterations += other.iterations
        self.tool_calls += other.tool_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.elapsed_s += other.elapsed_s


@dataclass
class LastResponse:
    """What the decision tree needs to know about the latest model response."""

    had_tool_calls: bool
    interrupted: bool
    wind_down: bool
    text: str
    cut_off: bool = False  # ended by the model's own output limit (finish_reason "length")
    continued: bool = False  # it went on with an answer the previous response had cut off


@dataclass
class CallLimits:
    """Headroom for the next model call, set by the tree, enforced while it streams."""

    seconds: float
    tokens: int
    cost_usd: float
    tool_calls: int
    time_warning: TimeWarning | None = None  # due while the call streams, if not given yet

    def passed_mid_call(self, tokens: int, cost_usd: float) -> bool:
        """Whether a streaming call that has used this much (estimated) must stop here."""
        return tokens >= self.tokens or cost_usd >= self.cost_usd

    def allowed_tool_calls(self, wanted: int) -> int:
        """How many of the `wanted` tool calls of a response may run."""
        return min(wanted, max(self.tool_calls, 0))


@dataclass
class TimeWarning:
    """The time warning the tree prepared, for the loop to give when the round's clock
    reaches `at_seconds`, even in the middle of a streaming call."""

    at_seconds: float
    limit: float  # the time limit the user sees, for the notice's figures
    text: str
    hint: str


@dataclass
class Notice:
    """A System message for the user, queued by the tree for the loop to emit."""

    severity: str
    text: str
    metric: str | None = None
    value: float | None = None
    limit: float | None = None


@dataclass
class ProviderFailure:
    """Why the model could not answer once the retries were spent: the kind, the HTTP
    status and the model, which the user is told, and the provider's own words (`detail`),
    which only the log and staff see."""

    kind: ModelProblem
    status: int | None = None
    model: str = ""
    detail: str = ""

    def __post_init__(self) -> None:
        self.kind = ModelProblem(self.kind)


@dataclass
class AgentState:
    """The mutable state of one run: history, counters, and the tree's bookkeeping.

    `round` counts since the run started or was last continued; `total` counts
    the whole run. Limits apply to the round; totals are what the user is shown.
    """

    run_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    status: RunStatus = RunStatus.RUNNING
    round: Usage = field(default_factory=Usage)
    total: Usage = field(default_factory=Usage)
    rounds: int = 1
    unlimited_iterations: bool = False
    iteration_ceiling: int = 0
    extensions_used: int = 0
    # The latest tool calls as [name, canonical arguments, outcome] (agents.progress).
    recent_actions: list[list[str]] = field(default_factory=list)
    consecutive_tool_errors: int = 0
    warnings_given: list[str] = field(default_factory=list)
    wind_down_reason: TerminationReason | None = None
    last_response: LastResponse | None = None
    estimated_prompt_tokens: int = 0
    estimated_call_cost_usd: float = 0.0
    call_limits: CallLimits | None = None
    pending_hints: list[str] = field(default_factory=list)
    pending_notices: list[Notice] = field(default_factory=list)
    pending_events: list[dict[str, Any]] = field(default_factory=list)
    cancel_requested: bool = False
    provider_failure: ProviderFailure | None = None
    paused_reason: TerminationReason | None = None
    # Tool calls that wait for the user's Approve or Deny ({"id", "name", "server",
    # "arguments"}), and the answers given so far by call id (True: approved).
    awaiting_approval: list[dict[str, Any]] = field(default_factory=list)
    approvals: dict[str, bool] = field(default_factory=dict)
    # The step's calls that ended, by call id ({"ok", "content"}), and those begun that
    # may act (their tools not idempotent), until the step closes: a run resumed after a
    # lost worker keeps the first and never runs the second again (`agents.run.tool_step`).
    step_results: dict[str, dict[str, Any]] = field(default_factory=dict)
    step_started: list[str] = field(default_factory=list)
    limit_hit: LimitHit | None = None
    termination_reason: TerminationReason | None = None
    failure_class: FailureClass | None = None
    final_text: str = ""
    next_seq: int = 1
    context: ContextLedger = field(default_factory=ContextLedger)
    extensions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def extension(self, namespace: str) -> dict[str, Any]:
        """The JSON-ready area a workflow module owns; core fields stay untouched."""
        return self.extensions.setdefault(namespace, {})

    def add_usage(self, *, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        """Record tokens and cost in both the round and the run totals."""
        for usage in (self.round, self.total):
            usage.prompt_tokens += prompt_tokens
            usage.completion_tokens += completion_tokens
            usage.cost_usd += cost_usd

    def add_child_usage(self, child: Usage) -> None:
        """Count a subagent's tokens and cost toward this run's budgets."""
        self.add_usage(
            prompt_tokens=child.prompt_tokens,
            completion_tokens=child.completion_tokens,
            cost_usd=child.cost_usd,
        )

    def add_elapsed(self, seconds: float) -> None:
        """Count active run time (paused time is never passed in)."""
        self.round.elapsed_s += seconds
        self.total.elapsed_s += seconds

    def begin_round(self, *, unlimited_iterations: bool) -> None:
        """Start a fresh round (Continue): round counters reset, totals keep counting."""
        self.round = Usage()
        self.rounds += 1
        self.unlimited_iterations = unlimited_iterations
        self.iteration_ceiling = 0
        self.extensions_used = 0
        self.recent_actions.clear()
        self.consecutive_tool_errors = 0
        self.warnings_given.clear()
        self.wind_down_reason = None
        self.last_response = None
        self.cancel_requested = False
        self.provider_failure = None
        self.paused_reason = None
        self.limit_hit = None
        self.context.overflow = False  # another model, or a Continue after a shorter one
        self.termination_reason = None
        self.failure_class = None
        self.final_text = ""
        self.status = RunStatus.RUNNING

    def apply_iteration_mode(self, *, unlimited_iterations: bool) -> None:
        """Switching from unlimited to a number restarts the round's iteration count."""
        if self.unlimited_iterations and not unlimited_iterations:
            self.round.iterations = 0
            self.iteration_ceiling = 0
        self.unlimited_iterations = unlimited_iterations

    def counters(self) -> dict[str, int | float]:
        """The run's totals as events, the API and the gauges show them."""
        total = self.total
        return {
            "iterations": total.iterations,
            "tool_calls": total.tool_calls,
            "tokens": total.tokens,
            "cost_usd": round(total.cost_usd, 6),
            "elapsed_ms": round(total.elapsed_s * 1000),
        }

    def counters_before_round(self) -> dict[str, int | float]:
        """The run's totals when this round began: the gauges show what the round used."""
        total, used = self.total, self.round
        return {
            "iterations": total.iterations - used.iterations,
            "tool_calls": total.tool_calls - used.tool_calls,
            "tokens": total.tokens - used.tokens,
            "cost_usd": round(total.cost_usd - used.cost_usd, 6),
            "elapsed_ms": round((total.elapsed_s - used.elapsed_s) * 1000),
        }

    def to_json(self) -> str:
        """Serialise the whole state (pause, resume, crash recovery)."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> AgentState:
        """Rebuild a state written by `to_json`."""
        data = json.loads(text)
        data["status"] = RunStatus(data["status"])
        data["round"] = Usage(**data["round"])
        data["total"] = Usage(**data["total"])
        data["last_response"] = (
            LastResponse(**data["last_response"]) if data["last_response"] else None
        )
        limits = data["call_limits"]
        if limits and limits.get("time_warning"):
            limits["time_warning"] = TimeWarning(**limits["time_warning"])
        data["call_limits"] = CallLimits(**limits) if limits else None
        data["limit_hit"] = LimitHit(**data["limit_hit"]) if data["limit_hit"] else None
        failure = data.get("provider_failure")
        data["provider_failure"] = ProviderFailure(**failure) if failure else None
        # States saved before failures had a kind kept the provider's words alone.
        old_detail = data.pop("provider_error", None)
        old_transient = data.pop("provider_error_transient", False)
        if old_detail is not None and not failure:
            kind = ModelProblem.PROVIDER_FAILED if old_transient else ModelProblem.FAILED
            data["provider_failure"] = ProviderFailure(kind, detail=old_detail)
        data["context"] = ContextLedger(**data.get("context") or {})  # none before windows
        data["pending_notices"] = [Notice(**notice) for notice in data["pending_notices"]]
        data.setdefault("awaiting_approval", [])  # states saved before approvals were asked
        data.setdefault("approvals", {})
        data.setdefault("step_results", {})  # states saved before calls were kept one by one
        data.setdefault("step_started", [])
        # States saved before results were compared kept "name:arguments" strings.
        data["recent_actions"] = [
            row if isinstance(row, list) else [*row.partition(":")[::2], ""]
            for row in data["recent_actions"]
        ]
        for key in ("wind_down_reason", "paused_reason", "termination_reason"):
            data[key] = TerminationReason(data[key]) if data[key] else None
        data["failure_class"] = (
            FailureClass(data["failure_class"]) if data["failure_class"] else None
        )
        return cls(**data)
