"""ORACLE_MODEL_WINDOWS: the context window of each model LiteLLM's table does not know,
as the operator names it (`model=tokens`, comma-separated)."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured


def model_windows(raw: dict[str, str]) -> dict[str, int]:
    """Each model's window in tokens; a value that is not a window stops the start with
    a one-line message."""
    windows = {}
    for model, tokens in raw.items():
        if not tokens.isdigit() or not 256 <= int(tokens) <= 100_000_000:
            raise ImproperlyConfigured(
                f"ORACLE_MODEL_WINDOWS: the window of {model!r} must be a number of tokens "
                f"from 256 (got {tokens!r}); write it as model=tokens, e.g. openai/smollm2=4096."
            )
        windows[model] = int(tokens)
    return windows
