"""What the user and the model are told about the context window: the System message
when the context was shortened, and why a run ends when even that cannot fit."""

from __future__ import annotations

REFUSED_AGAIN = "the provider refused the shortened request too"
OVERFLOW_ADVICE = (
    "Shorten your message or split it into parts, attach a long text as a document "
    "(the Oracle reads documents in parts), or pick a model with a larger context."
)


def compacted_notice(
    window: int, before: int, after: int, summarised: bool, stubbed: int, cut: int
) -> str:
    """'Earlier messages were summarised to fit the model's 8,192-token context (31,400 →
    5,200 tokens).', with what else was shortened."""
    done = []
    if summarised:
        done.append("earlier messages were summarised")
    if stubbed:
        done.append(
            f"{stubbed} older tool result{'s' if stubbed != 1 else ''} "
            f"{'were' if stubbed != 1 else 'was'} left out (the newest stay whole)"
        )
    if cut:
        done.append(
            f"{cut} long message{'s' if cut != 1 else ''} {'were' if cut != 1 else 'was'} cut"
        )
    if not done:
        done.append("older images are named instead of shown")
    what = done[0] if len(done) == 1 else f"{', '.join(done[:-1])} and {done[-1]}"
    return (
        f"{what[0].upper()}{what[1:]} to fit the model's {window:,}-token context "
        f"({before:,} → {after:,} tokens). The conversation itself is kept whole."
    )


def overflow_detail(question_tokens: int, head_tokens: int, room: int) -> str:
    """Which part alone is too big, with its size against the room a prompt has."""
    if head_tokens >= room:
        return (
            f"the Oracle's own instructions and tools alone take about {head_tokens:,} "
            f"of the {room:,} tokens a request may hold"
        )
    return (
        f"your newest message alone is about {question_tokens:,} tokens, and "
        f"{room - head_tokens:,} are left for it beside the Oracle's instructions and tools"
    )


def stopped(window: int, detail: str) -> str:
    """The first sentence of the final message of a run ended at the window."""
    return f"Stopped: the request does not fit the model's {window:,}-token context ({detail})."


def stop_notice(window: int, detail: str) -> str:
    """The System message of a run ended at the window: what, how big, and what helps."""
    return (
        f"The request does not fit the model's {window:,}-token context, even shortened: "
        f"{detail}. {OVERFLOW_ADVICE}"
    )
