"""A model's context window: how many tokens a request may hold, what a reply needs
of it, and the window a provider's refusal names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

# Room kept for the reply when the model's own output limit is unknown.
DEFAULT_REPLY_TOKENS = 1_024


class WindowSource(StrEnum):
    """Where a window's size came from (the operator's setting wins over LiteLLM's
    table; a provider's refusal wins over both, being the provider's own word)."""

    LITELLM = "litellm"
    OPERATOR = "operator"
    LEARNED = "learned"


@dataclass(frozen=True)
class ContextWindow:
    """How many tokens a request to the model may hold (prompt and reply), and its
    output limit when known."""

    tokens: int
    output_tokens: int | None = None
    source: WindowSource = WindowSource.LITELLM
    # How the provider counts a prompt against Oracle's count of it, as a refusal last
    # showed (a server's tokenizer is not always the one LiteLLM counts with).
    ratio: float = 1.0

    @property
    def reply_reserve(self) -> int:
        """Tokens kept free for the reply: its output limit, at most an eighth of the
        window (a small window still leaves most of itself to the prompt)."""
        return min(self.output_tokens or DEFAULT_REPLY_TOKENS, self.tokens // 8)

    @property
    def prompt_tokens(self) -> int:
        """The most a prompt may hold and still leave the reply its room."""
        return self.tokens - self.reply_reserve

    def mark(self, percent: int) -> int:
        """The prompt size past which the context is compacted: `percent` of the
        window, less the reply's room, whichever is smaller."""
        return min(self.tokens * percent // 100, self.prompt_tokens)

    def summary_tokens(self) -> int:
        """The longest summary a compaction call may write."""
        return max(96, min(self.tokens // 8, 1_024))


# How providers name the window in a refusal: OpenAI and vLLM ("This model's maximum
# context length is 4096 tokens"), llama-cpp-python ("exceed context window of 4096"),
# llama.cpp's server ("n_ctx": 4096), Anthropic ("210000 tokens > 200000 maximum"),
# Gemini ("maximum number of tokens allowed (32768)").
_WINDOW_WORDS = (
    re.compile(r"maximum context length is (\d[\d,]*)", re.IGNORECASE),
    re.compile(r"context window of (\d[\d,]*)", re.IGNORECASE),
    re.compile(r"\bn_ctx\W{1,4}(\d+)", re.IGNORECASE),
    re.compile(r"tokens? > (\d[\d,]*) maximum", re.IGNORECASE),
    re.compile(r"maximum number of tokens allowed \((\d[\d,]*)\)", re.IGNORECASE),
)
_REQUESTED_WORDS = (
    re.compile(r"you requested (\d[\d,]*) tokens", re.IGNORECASE),
    re.compile(r"requested tokens \((\d[\d,]*)\)", re.IGNORECASE),
    re.compile(r"\bn_prompt_tokens\W{1,4}(\d+)", re.IGNORECASE),
    re.compile(r"prompt is too long: (\d[\d,]*) tokens", re.IGNORECASE),
)


def _first_number(patterns: tuple[re.Pattern[str], ...], text: str) -> int | None:
    for pattern in patterns:
        found = pattern.search(text)
        if found:
            number = int(found[1].replace(",", ""))
            if number > 0:
                return number
    return None


def window_in_refusal(detail: str) -> int | None:
    """The window a provider's context-length refusal names, if it names one."""
    return _first_number(_WINDOW_WORDS, detail)


def requested_in_refusal(detail: str) -> int | None:
    """The size of the refused request as the provider counted it, if it says."""
    return _first_number(_REQUESTED_WORDS, detail)
