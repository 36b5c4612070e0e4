"""One drive of the loop over a state: what its steps share while it lasts.

The run's state (messages, counters) is saved and continued; this is what a drive
keeps beside it only while it runs: where the round's clock stands, the call's
deadline, the running estimate of the prompt's size, the text not yet shown, and
the one waiter on the cancel token.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agents.attachments import with_pictures
from agents.cancel import CancelToken
from agents.context.window import ContextWindow, WindowSource
from agents.events import Event, EventSink
from agents.model import Message
from agents.run.deps import Headroom, RunDeps
from agents.state import AgentState
from agents.tools_share import schemas_tokens

# Before the first call there is no completion to learn from; assume a short answer.
FIRST_COMPLETION_ESTIMATE = 256

CheckpointSink = Callable[[AgentState], Awaitable[None]]


class RunContext:
    """One drive of the loop over a state; each step takes it and works on it."""

    def __init__(
        self,
        state: AgentState,
        deps: RunDeps,
        on_event: EventSink,
        cancel: CancelToken | None,
        on_checkpoint: CheckpointSink | None,
    ) -> None:
        self.state = state
        self.on_checkpoint = on_checkpoint
        self.deps = deps
        self.tree = deps.tree
        self.model = deps.model
        self.clock = deps.clock
        self.on_event = on_event
        self.cancel = cancel or CancelToken()
        self.mark = self.clock.now()
        self.deadline = self.mark
        # Running estimate of the prompt size, updated as messages are added, so
        # each iteration costs the same however long the history grows.
        self.context_tokens = 0
        self.counted_messages = 0
        self.tools_tokens = schemas_tokens(self.model.count_tokens, deps.tools.schemas)
        # Tokens of each history message as sent, by identity (the entry holds the
        # message, so its id is not reused while it is there): counted once a run.
        self.token_counts: dict[int, tuple[Message, int]] = {}
        # Our own count of the last request fitted message by message (0: estimated
        # only), to learn from the provider's figure how it counts.
        self.counted_prompt = 0
        self.unemitted_text = ""
        self.turn_start = (0, 0.0)  # the round's tokens and cost when the call began
        # One waiter on the cancel token for the whole drive, not one per model call
        # or tool batch: a task less to create and cancel on every step.
        self.stopper: asyncio.Future[None] | None = None

    async def emit(self, event_type: str, **fields: Any) -> None:
        """An event in the run's stream, numbered after the last."""
        event: Event = {"type": event_type, "seq": self.state.next_seq, **fields}
        self.state.next_seq += 1
        await self.on_event(event)

    async def checkpoint(self) -> None:
        """Hand the state to be saved, when the caller keeps checkpoints."""
        if self.on_checkpoint is not None:
            await self.on_checkpoint(self.state)

    def headroom(self) -> Headroom:
        """The round's time, tokens and cost left now."""
        limits, used = self.state.call_limits, self.state.round
        if limits is None:
            return Headroom(0.0, 0, 0.0)
        tokens, cost = self.turn_start
        return Headroom(
            seconds=self.deadline - self.clock.now(),
            tokens=limits.tokens - (used.tokens - tokens),
            cost_usd=limits.cost_usd - (used.cost_usd - cost),
        )

    def tick(self) -> None:
        """Count the time since the last tick as the run's."""
        now = self.clock.now()
        self.state.add_elapsed(now - self.mark)
        self.mark = now

    @property
    def window(self) -> ContextWindow | None:
        """The model's window: the one a refusal taught this run, else the one known."""
        known, ledger = self.deps.window, self.state.context
        learned = ledger.window if ledger.window_model == self.model.name else 0
        if learned:
            output = known.output_tokens if known else None
            return ContextWindow(learned, output, WindowSource.LEARNED, self.ratio)
        return known

    @property
    def ratio(self) -> float:
        """How the provider counts a prompt against our count: as this run learned it,
        else as the app remembers it for the model."""
        window = self.deps.window
        return self.state.context.ratio or (window.ratio if window else 1.0)

    def count(self, message: Message) -> int:
        """One message's tokens as the provider would count them (our count, scaled by
        what the provider's own figures taught the run)."""
        known = self.token_counts.get(id(message))
        if known is None or known[0] is not message:
            known = (message, self.model.count_tokens([message]))
            self.token_counts[id(message)] = known
        return round(known[1] * self.ratio)

    def count_all(self, messages: Sequence[Message]) -> int:
        """Messages' tokens as the provider would count them, not kept."""
        return round(self.model.count_tokens(messages) * self.ratio)

    def count_tools(self) -> int:
        """The tools' schemas' tokens as the provider would count them."""
        return round(self.tools_tokens * self.ratio)

    def estimate_next_call(self) -> None:
        """The next call's prompt tokens and cost, for the tree to decide on."""
        state = self.state
        new_messages = state.messages[self.counted_messages :]
        if new_messages:
            # As the model is sent them: the images attached beside their messages.
            shown = with_pictures(new_messages, self.deps.pictures)
            self.context_tokens += self.model.count_tokens(shown)
            self.counted_messages = len(state.messages)
        prompt = self.context_tokens + self.tools_tokens
        window = self.window
        if window is not None:
            # What is sent is shortened to fit: the call holds no more than its room.
            prompt = min(prompt, window.prompt_tokens)
        done = state.total.iterations
        completion = state.total.completion_tokens // done if done else FIRST_COMPLETION_ESTIMATE
        state.estimated_prompt_tokens = prompt
        state.estimated_call_cost_usd = self.model.price(prompt, completion)

    def stop_waiting(self) -> None:
        """The drive is over: its waiter on the cancel token goes."""
        if self.stopper is not None:
            self.stopper.cancel()
