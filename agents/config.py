"""AgentConfig: the user's limits for a run, declared once (SPEC section 2), and the
operator's hard caps.

Every layer (the engine, the settings form, the API, the CLI) reads the fields,
defaults and bounds from `FIELDS` (declared in `agents.config_fields`), validates
with `validate_config` (`agents.config_parsing`) and builds an `AgentConfig` with
`AgentConfig.from_raw`; all of them can be imported from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from agents.config_fields import FIELDS as FIELDS
from agents.config_fields import FIELDS_BY_NAME as FIELDS_BY_NAME
from agents.config_fields import FieldKind as FieldKind
from agents.config_fields import FieldSpec as FieldSpec
from agents.config_fields import LimitAction as LimitAction
from agents.config_parsing import ConfigError as ConfigError
from agents.config_parsing import ConfigErrors as ConfigErrors
from agents.config_parsing import parse_values
from agents.config_parsing import validate_config as validate_config


@dataclass(frozen=True)
class AgentConfig:
    """The limits one run works under, and the user's instructions for it. Build it with
    `from_raw` to get validation."""

    model: str = ""
    max_iterations: int = 15
    unlimited_iterations: bool = False
    soft_warning_percent: int = 70
    token_budget: int = 50_000
    token_warning_percent: int = 80
    context_compact_percent: int = 80
    timeout_seconds: int = 120
    max_tool_calls_per_turn: int = 30
    max_parallel_tools: int = 3
    max_cost_usd: float = 1.00
    limit_action: LimitAction = LimitAction.STOP
    extend_multiplier: int = 4
    max_extensions: int = 1
    no_progress_repeats: int = 3
    max_consecutive_tool_errors: int = 3
    custom_instructions: str = ""  # the user's, added to every run's system prompt

    @classmethod
    def from_raw(
        cls,
        raw: Mapping[str, object],
        *,
        base: AgentConfig | None = None,
        allowed_models: Sequence[str] | None = None,
    ) -> AgentConfig:
        """Build a config from raw values (form strings, JSON, flags) over `base`.

        Raises `ConfigError` carrying {field: [message]} when any value is bad.
        """
        values, errors = parse_values(raw, allowed_models)
        if errors:
            raise ConfigError(errors)
        return replace(base or cls(), **values)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        data = asdict(self)
        data["limit_action"] = self.limit_action.value
        return data


def field_names() -> list[str]:
    """Names of every AgentConfig field, in declaration order."""
    return [f.name for f in fields(AgentConfig)]


@dataclass(frozen=True)
class OperatorLimits:
    """Hard caps set by the operator; they end a run even under `warn` or unlimited.

    `max_cost_usd` may be what is left of a spending cap larger than one run (a daily
    one, for the user or the site): `cost_cap_name` then says which, for the System
    message ("the daily spending cap for your account ($2.00)"), and `cost_cap_note`
    when it renews ("it resets at 00:00 UTC"). Empty: the per-run cap, in the usual words.
    """

    max_iterations: int = 200
    max_tool_calls: int = 1_000
    token_budget: int = 2_000_000
    timeout_seconds: float = 3_600
    max_cost_usd: float = 100.0
    cost_cap_name: str = ""
    cost_cap_note: str = ""


# The most bytes of arguments one tool call may send, unless the operator says otherwise:
# room for a long text, far short of a stream that runs away (64 KiB).
TOOL_ARGUMENTS_MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class CallBounds:
    """The operator's bounds on one tool call and on a run's tree of helpers (subagents).

    `tool_arguments_max_bytes`: the most bytes of arguments one call may send; the
    provider's stream is not read past it. `subagents_max_per_run`: how many helpers a run
    may start in all (its helpers' helpers included); `subagents_max_depth`: how deep
    helpers may start helpers (1: only the run itself delegates); `subagents_max_concurrent`:
    how many helpers may work at once. A call past one is refused, a tool error that says
    why and what to do instead.
    """

    tool_arguments_max_bytes: int = TOOL_ARGUMENTS_MAX_BYTES
    subagents_max_per_run: int = 10
    subagents_max_depth: int = 1
    subagents_max_concurrent: int = 3
