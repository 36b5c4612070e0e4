"""What a run keeps of its context window between calls, saved with its state: the
window a refusal taught it, the summary that stands in for its older messages, how
its counts compare with the provider's, and the figures the chat's gauge shows."""

from __future__ import annotations

from dataclasses import dataclass

from agents.context.window import requested_in_refusal, window_in_refusal


@dataclass(frozen=True)
class Summary:
    """A summary an earlier run made of a conversation's first `covers` messages, which a
    new run sends in their place."""

    text: str
    covers: int


# How far the provider's count of a prompt may be from ours before it is not believed.
RATIO_BOUNDS = (0.5, 4.0)


@dataclass
class ContextLedger:
    """A run's context bookkeeping (all JSON-ready).

    `summary` stands in for the messages from the first after the system prompt up to
    `summary_end`; `history` is how many of the run's first messages came from the
    conversation (its earlier turns, then the question), so that a summary's reach can
    be told in the conversation's own messages (`covers`).
    """

    window: int = 0  # learned from a provider's refusal during this run (0: none)
    window_model: str = ""  # the model it was learned of (a Continue may use another)
    summary: str = ""
    summary_end: int = 0
    history: int = 0
    ratio: float = 0.0  # the provider's count of a prompt over ours (0: not learned yet)
    prompt_tokens: int = 0  # the latest call's prompt, as sent (the gauge)
    window_tokens: int = 0  # the window it was measured against (0: none known)
    shortened: bool = False  # tool results or messages were shortened in this run
    compactions: int = 0  # summaries made
    refusals: int = 0  # requests the provider refused as too long
    overflow: bool = False  # even shortened, the request could not fit: the run ends

    def covers(self) -> int:
        """How many of the conversation's messages the summary covers (0: none)."""
        return max(0, min(self.summary_end - 1, self.history)) if self.summary else 0

    def learn(self, refusal: str, sent_tokens: int, ratio: float, model: str) -> int:
        """Learn the window from a provider's refusal (the number its words name, else
        the size refused) and how it counts against us, `sent_tokens` being the refused
        request as we counted it at `ratio`; the window."""
        learned = window_in_refusal(refusal) or sent_tokens
        requested = requested_in_refusal(refusal)
        if requested and sent_tokens:
            self.calibrate(round(requested * ratio), sent_tokens)
        elif learned >= sent_tokens > 0:  # refused though we counted it inside: we count low
            self.calibrate(round(learned * 1.1 * ratio), sent_tokens)
        self.window, self.window_model = learned, model
        self.refusals += 1
        return learned

    def calibrate(self, provider_tokens: int, our_tokens: int) -> None:
        """Learn how the provider counts a prompt against our own count of it."""
        if provider_tokens > 0 and our_tokens > 0:
            low, high = RATIO_BOUNDS
            self.ratio = min(high, max(low, provider_tokens / our_tokens))
