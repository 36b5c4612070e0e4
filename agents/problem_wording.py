"""What the user is told when the model could not answer: the kind of failure in plain
words, the HTTP status, the attempts, and what can help. Never the provider's own words."""

from __future__ import annotations

from agents.figures import number
from agents.limit_hit import LimitHit
from agents.model import ModelProblem
from agents.state import ProviderFailure

_PROBLEMS = {
    ModelProblem.PROVIDER_FAILED: "the model provider failed",
    ModelProblem.UNREACHABLE: "the connection to the model provider failed",
    ModelProblem.RATE_LIMITED: "the model provider turned the calls away as too many",
    ModelProblem.AUTH: "the provider refused the API key",
    ModelProblem.UNKNOWN_MODEL: "the provider does not know the model `{model}`",
    ModelProblem.CONTEXT_TOO_LONG: "the provider rejected the request",
    ModelProblem.BAD_REQUEST: "the provider rejected the request",
    ModelProblem.FAILED: "the model call failed",
}
_PROBLEM_CAUSES = {
    ModelProblem.CONTEXT_TOO_LONG: "the conversation is too long for the model's context",
}
_WHAT_HELPS = {
    ModelProblem.RATE_LIMITED: "Wait a little, then press Continue to try again.",
    ModelProblem.AUTH: "Check the key in the server's settings or pick another model.",
    ModelProblem.UNKNOWN_MODEL: "Pick another model in Settings.",
    ModelProblem.CONTEXT_TOO_LONG: (
        "Start a new conversation or pick a model with a longer context in Settings."
    ),
    ModelProblem.BAD_REQUEST: "Pick another model in Settings.",
}


def model_problem(failure: ProviderFailure) -> str:
    """What went wrong, in plain words: 'the provider refused the API key'."""
    return _PROBLEMS[failure.kind].format(model=failure.model)


def provider_notice(failure: ProviderFailure, hit: LimitHit | None) -> str:
    """The System message when the model could not answer: the kind and status, the
    attempts when retrying could help, and what to do. Never the provider's own words."""
    what = model_problem(failure)
    status = f" ({failure.status})" if failure.status else ""
    tries = f" on {attempts(hit)}" if hit is not None and not failure.kind.needs_settings else ""
    cause = f": {_PROBLEM_CAUSES[failure.kind]}" if failure.kind in _PROBLEM_CAUSES else ""
    helps = _WHAT_HELPS.get(failure.kind, "Press Continue to try again.")
    return f"{what[0].upper()}{what[1:]}{status}{tries}{cause}. {helps}"


def attempts(hit: LimitHit) -> str:
    """'3 of 3 attempts'."""
    return f"{number(hit.metric, hit.value)} of {number(hit.metric, hit.limit)} attempts"
