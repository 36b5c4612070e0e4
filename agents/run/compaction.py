"""Keeping every request inside the model's window (SPEC section 3, "The context
window"): before each call, past the user's share of the window, older tool results
become stubs, then older turns are summarised by the model in a compaction call of
the run's own (counted, and stopped by Stop and the time limit like any call), then a
message too big for what is left is cut. A refusal for length teaches the run the
window, and the step is sent again once, shortened. The history is never changed:
only what is sent.
"""

from __future__ import annotations

from agents.attachments import with_pictures
from agents.context import transcript, words
from agents.context.view import Shape, newest_step, size_of, split_points
from agents.context.window import ContextWindow, requested_in_refusal
from agents.events import EventType
from agents.model import Message, ModelError, ModelRequest
from agents.run.calling import call_model, record_usage
from agents.run.context import RunContext
from agents.run.fitting import Fit
from agents.state import LimitHit, Metric

# After compacting, the prompt lands at this share of the mark, so that the next
# compactions are some calls away rather than at every call.
LOW_WATER = 5 / 8
# A running estimate this far below the mark is believed without counting each message.
SURE_BELOW = 0.9
MIN_CUT_TOKENS = 64  # a message is never cut to less than this
TRANSCRIPT_OVERHEAD = 200  # the compaction call's instruction and framing, in tokens


async def fit(run: RunContext, tools: object) -> list[Message] | None:
    """The messages to send for the next call, inside the window; None when the run
    cannot go on (a compaction call was stopped, or even shortened it cannot fit: the
    state says which)."""
    state, ledger = run.state, run.state.context
    window = run.window
    fixed = run.count_tools() if tools else 0
    untouched = not (ledger.summary or ledger.shortened)
    run.counted_prompt = 0
    if window is None and untouched:
        return list(with_pictures(state.messages, run.deps.pictures))  # nothing to keep to
    mark = window.mark(run.tree.get_config().context_compact_percent) if window else 0
    if window is not None and untouched:
        # Far below the mark by the run's running estimate (the provider's last figures
        # and what came since): sent whole, without counting each message again, so a
        # call costs the same however long the history (bench/engine.py).
        estimate = round(run.context_tokens * max(1.0, run.ratio)) + fixed
        if estimate <= mark * SURE_BELOW:
            await _used(run, estimate, window)
            return list(with_pictures(state.messages, run.deps.pictures))
    fitting = Fit(run, state.messages, Shape(ledger.summary, ledger.summary_end), fixed)
    if window is None:  # a summary an earlier run made, and no window known now
        return fitting.sent()
    low = int(mark * LOW_WATER)
    before = fitting.total
    made_summary = False
    if fitting.total > mark:
        _stub_older(fitting, low)
    if fitting.total > mark:
        end = _summary_end(fitting, window, low)
        if end is not None:
            if not await _summarise(run, fitting, window, end):
                return None
            made_summary = True
    if fitting.total > mark:
        _cut_largest(fitting, mark)
    if fitting.total > window.prompt_tokens:
        _overflow(run, fitting, window)
        return None
    shortened = bool(fitting.shape.stubbed or fitting.shape.cut or fitting.images_named())
    if made_summary or (shortened and not ledger.shortened):
        whole = Fit(run, state.messages, Shape(), fixed).total if made_summary else before
        await _announce(run, fitting, window, whole, made_summary)
    ledger.shortened = ledger.shortened or shortened
    run.counted_prompt = round(fitting.total / run.ratio)  # to learn the provider's count by
    await _used(run, fitting.total, window)
    return fitting.sent()


async def _used(run: RunContext, tokens: int, window: ContextWindow) -> None:
    """This call's prompt against the window: kept for the gauge, and told."""
    ledger = run.state.context
    ledger.prompt_tokens, ledger.window_tokens = tokens, window.tokens
    await run.emit(EventType.CONTEXT_USED, prompt_tokens=tokens, window=window.tokens)


def _stub_older(fitting: Fit, low: int) -> None:
    """Stage 1: older images are named instead of shown, then older tool results become
    stubs, oldest first, until the prompt is down to `low`; the newest step stays whole."""
    shape, messages = fitting.shape, fitting.messages
    shape.pictures_from = max(fitting.question, 0)
    fitting.recount()
    first = max(fitting.start, shape.summary_end)
    for index in range(first, newest_step(messages)):
        if fitting.total <= low:
            break
        if messages[index].get("role") != "tool":
            continue
        shape.stubbed.add(index)
        stubbed = fitting.run.count(fitting.form(index))
        if stubbed >= fitting.counts[index]:  # a short result says more than its stub
            shape.stubbed.discard(index)
        else:
            fitting.counts[index] = stubbed


def _summary_end(fitting: Fit, window: ContextWindow, low: int) -> int | None:
    """Stage 2: where a new summary should end, the fewest messages that bring the
    prompt down to `low` (all but the newest step when none do); None when summarising
    would not save more than the summary costs."""
    messages, shape = fitting.messages, fitting.shape
    first = max(fitting.start, shape.summary_end)
    allowance = window.summary_tokens()
    candidates = [s for s in split_points(messages, first + 1, newest_step(messages)) if s > first]
    if not candidates:
        return None
    fixed = fitting.fixed + allowance
    chosen = candidates[-1]
    for end in candidates:
        if fixed + sum(fitting.counts[i] for i in fitting.sent_indices(end)) <= low:
            chosen = end
            break
    covered = sum(fitting.counts[i] for i in range(first, chosen) if i != fitting.question)
    return chosen if covered + fitting.summary_tokens > 2 * allowance else None


async def _summarise(run: RunContext, fitting: Fit, window: ContextWindow, end: int) -> bool:
    """Fold the messages up to `end` into the summary with compaction calls (as many as
    the window needs); False when one was stopped or failed (the state says why)."""
    ledger, shape = run.state.context, fitting.shape
    first = max(fitting.start, shape.summary_end)
    items = transcript.transcript_items(fitting.messages, first, end)
    allowance = window.summary_tokens()
    budget = window.prompt_tokens - 2 * allowance - TRANSCRIPT_OVERHEAD
    budget_chars = max(int(budget * transcript.CHARS_PER_TOKEN / run.ratio), 400)
    summary = shape.summary
    for number, part in enumerate(transcript.parts(items, budget_chars)):
        sent = transcript.request_messages(allowance, summary, part, number == 0)
        prompt = run.count_all(sent)
        request = ModelRequest(messages=sent, tools=None, max_tokens=allowance)
        streamed = await call_model(run, request, quiet=True, prompt_tokens=prompt)
        record_usage(run, streamed, prompt)
        if streamed.refusal is not None:
            _learn(run, streamed.refusal, prompt)
            _overflow(run, fitting, run.window or window)
            return False
        if streamed.interrupted or not streamed.text.strip():
            return False
        summary = streamed.text.strip()
    shape.summary, shape.summary_end = summary, end
    shape.stubbed = {i for i in shape.stubbed if i >= end}
    ledger.summary, ledger.summary_end = summary, end
    ledger.compactions += 1
    fitting.recount()
    return True


def _cut_largest(fitting: Fit, goal: int) -> None:
    """Stage 3: cut the largest messages sent (never the system prompt or the newest
    user message) to their head and tail until the prompt is down to `goal`."""
    shape = fitting.shape
    cuttable = [
        i
        for i in fitting.sent_indices()
        if i >= fitting.start and i != fitting.question and i not in shape.stubbed
    ]
    for index in sorted(cuttable, key=lambda i: -fitting.counts[i]):
        excess = fitting.total - goal
        if excess <= 0:
            return
        tokens = fitting.counts[index]
        keep_tokens = tokens - excess
        if keep_tokens < MIN_CUT_TOKENS:
            keep_tokens = MIN_CUT_TOKENS
        if keep_tokens >= tokens:
            continue
        chars = size_of(fitting.messages[index])
        shape.cut[index] = max(chars * keep_tokens // tokens, 200)
        fitting.counts[index] = fitting.run.count(fitting.form(index))


def _overflow(run: RunContext, fitting: Fit, window: ContextWindow) -> None:
    """Even shortened, the request cannot fit: the run ends, saying what is too big."""
    question = fitting.question
    question_tokens = fitting.counts[question] if question >= 0 else 0
    head = sum(fitting.counts[i] for i in range(fitting.start)) + fitting.fixed
    run.state.context.overflow = True
    run.state.limit_hit = LimitHit(
        Metric.CONTEXT,
        fitting.total,
        window.tokens,
        detail=words.overflow_detail(question_tokens, head, window.prompt_tokens),
    )


async def _announce(
    run: RunContext, fitting: Fit, window: ContextWindow, whole: int, summarised: bool
) -> None:
    shape = fitting.shape
    await run.emit(
        EventType.CONTEXT_COMPACTED,
        model=run.model.name,
        window=window.tokens,
        before=whole,
        after=fitting.total,
        summarised=summarised,
        stubbed=len(shape.stubbed),
        cut=len(shape.cut),
        summary=shape.summary if summarised else "",
        covers=run.state.context.covers(),
        text=words.compacted_notice(
            window.tokens, whole, fitting.total, summarised, len(shape.stubbed), len(shape.cut)
        ),
    )


def _learn(run: RunContext, error: ModelError, sent_tokens: int) -> int:
    """Learn the window (and how the provider counts) from its refusal."""
    return run.state.context.learn(str(error), sent_tokens, run.ratio, run.model.name)


async def after_refusal(
    run: RunContext, error: ModelError, sent_tokens: int, tools: object
) -> list[Message] | None:
    """The provider refused the request as too long: learn the window, say so (the
    app remembers it for the model), and shorten the request to send it again."""
    learned = _learn(run, error, sent_tokens)
    await run.emit(
        EventType.CONTEXT_REFUSED,
        model=run.model.name,
        window=learned,
        requested=requested_in_refusal(str(error)) or sent_tokens,
        ratio=round(run.ratio, 4),
        status=error.status,
    )
    return await fit(run, tools)


def refused_again(run: RunContext, error: ModelError, sent_tokens: int) -> None:
    """The shortened request was refused too: the run ends rather than try again."""
    learned = _learn(run, error, sent_tokens)
    run.state.context.overflow = True
    run.state.limit_hit = LimitHit(Metric.CONTEXT, sent_tokens, learned, detail=words.REFUSED_AGAIN)
