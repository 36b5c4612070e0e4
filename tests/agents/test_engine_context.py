"""The context window: no conversation and no run dies at the model's window.

Against the local fake provider, which refuses an over-window request exactly as OpenAI
does (400, `context_length_exceeded`) and counts tokens its own way; the scripted model
where only the shape of what is sent matters.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import replace
from typing import Any

import pytest

from agents.attachments import Attached, Picture, with_attachments
from agents.builtin_tools import builtin_tools
from agents.cancel import CancelToken
from agents.clock import Clock
from agents.config import AgentConfig
from agents.context.window import ContextWindow, WindowSource
from agents.events import EventCollector
from agents.loop import RunDeps, Summary, start_run
from agents.model import content_text, image_parts
from agents.subagents import AgentType, Delegation
from agents.testing.fake_server import FakeServer
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tools import Tool, ToolRegistry
from agents.tree import DefaultDecisionTree

WORDS = [
    "owl",
    "river",
    "stone",
    "lantern",
    "maple",
    "quiet",
    "harbor",
    "ember",
    "violet",
    "canyon",
]


def long_message(number: int, words: int = 900) -> str:
    """About 1,000 tokens of text that says which message it is."""
    chosen = random.Random(number)
    return f"Message {number}: " + " ".join(chosen.choice(WORDS) for _ in range(words))


DOCUMENT = " ".join(random.Random(7).choice(WORDS) for _ in range(12_000))[:60_000]


def read_document(offset: str) -> str:
    """Read 6,000 characters of the document.

    Args:
        offset: Which piece to read, from 0.
    """
    start = int(offset) * 6_000
    return DOCUMENT[start : start + 6_000]


def litellm_model(server: FakeServer) -> Any:
    from agents.litellm_model import LiteLLMModel

    return LiteLLMModel("openai/fake-model", api_base=server.base_url, api_key="k")


def is_compaction(request: dict[str, Any]) -> bool:
    return bool(request.get("max_tokens"))


class Conversation:
    """Runs one after another in one conversation, remembering what the app remembers:
    the earlier turns, the summary a run made of them, and a window a refusal taught."""

    def __init__(self, model: Any, **config: Any) -> None:
        self.model = model
        self.config = AgentConfig.from_raw(config)
        self.history: list[dict[str, Any]] = []
        self.summary: Summary | None = None
        self.window: ContextWindow | None = None
        self.events: list[EventCollector] = []

    async def send(self, question: str, *, cancel: CancelToken | None = None, clock=None):
        deps = RunDeps(
            model=self.model,
            tree=DefaultDecisionTree(self.config),
            tools=builtin_tools(),
            window=self.window,
            clock=clock or Clock(),
        )
        events = EventCollector()
        self.events.append(events)
        result = await start_run(
            question, deps, on_event=events, history=self.history, summary=self.summary,
            cancel=cancel,
        )  # fmt: skip
        self.history += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": result.final_text},
        ]
        for event in events.of_type("context.refused"):
            self.window = ContextWindow(
                event["window"], source=WindowSource.LEARNED, ratio=event["ratio"]
            )
        for event in events.of_type("context.compacted"):
            if event["summary"]:
                self.summary = Summary(event["summary"], event["covers"])
        return result, events


@pytest.mark.parametrize(
    ("empty_streams", "refused"),
    [(False, 1), (True, 2)],
    # llama-cpp-python's server answers a streamed request over its window with a 200
    # and an empty stream: the request is asked again unstreamed, which brings the 400.
    ids=["openai", "llama-cpp-python"],
)
async def test_ten_messages_of_a_thousand_tokens_against_a_3000_token_window_all_complete(
    empty_streams, refused
):
    script = [{"text": "Noted."}]
    with FakeServer(
        script, repeat_last=True, window=3_000, streams_refused_empty=empty_streams
    ) as server:
        chat = Conversation(litellm_model(server))
        questions = [long_message(n) for n in range(1, 11)]
        for question in questions:
            result, _ = await chat.send(question)
            assert result.reason.value == "completed"

        # One refusal taught the window; every request since stayed inside it.
        assert len(server.refused) == refused
        assert sum(len(events.of_type("context.refused")) for events in chat.events) == 1
        answers = [r for r in server.requests if not is_compaction(r)]
        assert len(answers) == 10
        for question, request in zip(questions, answers, strict=True):
            assert request["messages"][-1] == {"role": "user", "content": question}
        notices = [e["text"] for ev in chat.events for e in ev.of_type("context.compacted")]
        assert notices[0].startswith(
            "Earlier messages were summarised to fit the model's 3,000-token context ("
        )
        assert "The conversation itself is kept whole." in notices[0]


async def test_one_run_reads_a_60000_character_document_in_ten_pieces_against_6000_tokens():
    script = [
        {
            "tool_calls": [{"name": "read_document", "arguments": {"offset": "{round}"}}],
            "tool_rounds": 10,
            "text": "It is a list of words about owls and rivers.",
        }
    ]
    with FakeServer(script, repeat_last=True, window=6_000) as server:
        deps = RunDeps(
            model=litellm_model(server),
            tree=DefaultDecisionTree(AgentConfig(token_budget=200_000)),
            tools=ToolRegistry([Tool.from_function(read_document)]),
        )
        events = EventCollector()
        result = await start_run("What is the document about?", deps, on_event=events)

    assert result.reason.value == "completed"
    assert result.final_text == "It is a list of words about owls and rivers."
    assert len(server.refused) == 1
    # The run keeps every piece whole; only what was sent was shortened.
    kept = [m["content"] for m in result.state.messages if m["role"] == "tool"]
    assert "".join(kept) == DOCUMENT
    (compacted,) = events.of_type("context.compacted")
    assert compacted["stubbed"] >= 1 and not compacted["summarised"]
    last = server.requests[-1]["messages"]
    assert last[1]["content"] == "What is the document about?"
    assert read_document("9") in [m.get("content") for m in last]  # the newest result whole
    assert "Call the tool again if you need it." in content_text(last[3]["content"])


async def test_a_known_window_is_kept_and_a_provider_counting_more_costs_one_refusal():
    # The fake provider counts about half as many tokens again as LiteLLM's tokenizer
    # does for these words: the first refusal shows by how much, and it is remembered.
    with FakeServer([{"text": "Noted."}], repeat_last=True, window=3_000) as server:
        chat = Conversation(litellm_model(server))
        chat.window = ContextWindow(3_000, source=WindowSource.OPERATOR)
        for number in range(1, 7):
            result, events = await chat.send(long_message(number))
            assert result.reason.value == "completed"
            used = events.of_type("context.used")[-1]
            assert used["window"] == 3_000 and used["prompt_tokens"] <= 2_400
        assert len(server.refused) == 1
        # Learnt from the whole request refused, tools and all (the words alone: 1.45).
        assert 1.3 < chat.window.ratio < 1.6


async def test_a_summary_made_by_an_earlier_run_is_sent_again_not_made_again():
    with FakeServer([{"text": "Noted."}], repeat_last=True, window=3_000) as server:
        chat = Conversation(litellm_model(server))
        chat.window = ContextWindow(3_000, source=WindowSource.OPERATOR)
        chat.history = [
            {"role": "user", "content": long_message(1)},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": long_message(2)},
            {"role": "assistant", "content": "Noted."},
        ]
        chat.summary = Summary("The user sent two long messages of words.", covers=4)

        result, events = await chat.send("And now a short one?")

    assert result.reason.value == "completed"
    (request,) = server.requests
    assert not is_compaction(request)
    assert "The user sent two long messages of words." in request["messages"][1]["content"]
    assert request["messages"][-1]["content"] == "And now a short one?"
    assert events.of_type("context.compacted") == []


async def test_a_message_larger_than_the_window_ends_the_run_at_once_with_advice():
    with FakeServer([{"text": "Noted."}], repeat_last=True, window=3_000) as server:
        chat = Conversation(litellm_model(server))
        chat.window = ContextWindow(3_000, source=WindowSource.OPERATOR)

        result, events = await chat.send(long_message(1, words=4_000))

    assert result.reason.value == "context_window"
    assert server.requests == [] and server.refused == []
    notice = events.of_type("system.notice")[-1]
    assert notice["text"].startswith(
        "The request does not fit the model's 3,000-token context, even shortened: your "
        "newest message alone is about "
    )
    assert "Shorten your message or split it into parts" in notice["text"]
    assert result.state.failure_class.value == "deterministic"
    assert result.state.messages[-1]["content"] == long_message(1, words=4_000)


def compaction_hangs(server: FakeServer, answers: int) -> None:
    """Answers go through; the compaction call hangs until the client goes away."""
    server.set_script([{"text": "Noted."}] * answers + [{"text": "Sum", "hang": True}])


async def test_stop_interrupts_a_compaction_call_within_a_second():
    with FakeServer(window=3_000) as server:
        chat = Conversation(litellm_model(server))
        chat.window = ContextWindow(3_000, source=WindowSource.OPERATOR)
        compaction_hangs(server, answers=1)
        await chat.send(long_message(1))
        cancel = CancelToken()
        sending = asyncio.ensure_future(chat.send(long_message(2), cancel=cancel))
        await asyncio.sleep(0.5)
        assert is_compaction(server.requests[-1])
        pressed = time.monotonic()
        cancel.cancel()
        result, events = await sending
        stopped_in = time.monotonic() - pressed
        assert server.wait_for_disconnect(1)  # the compaction call was hung up on

    assert result.reason.value == "cancelled"
    assert stopped_in < 1.0
    assert events.of_type("assistant.delta") == []  # the summary is never the answer


async def test_the_time_limit_interrupts_a_compaction_call():
    with FakeServer(window=3_000) as server:
        chat = Conversation(litellm_model(server), timeout_seconds=10)
        chat.window = ContextWindow(3_000, source=WindowSource.OPERATOR)
        compaction_hangs(server, answers=1)
        await chat.send(long_message(1))
        started = time.monotonic()
        result, _ = await chat.send(long_message(2), clock=Clock(rate=20))  # 10 s in 0.5 s

    assert result.reason.value == "timeout"
    assert time.monotonic() - started < 1.5
    assert is_compaction(server.requests[-1])


async def test_a_compaction_call_counts_in_the_runs_tokens_and_cost():
    usage = {"prompt_tokens": 1_000, "completion_tokens": 50}
    script = [{"text": "Noted.", "usage": usage}, {"text": "Summary.", "usage": usage}]
    with FakeServer([*script, {"text": "Noted.", "usage": usage}], window=3_000) as server:
        from agents.litellm_model import LiteLLMModel

        chat = Conversation(
            LiteLLMModel("openai/gpt-4o-mini", api_base=server.base_url, api_key="k")
        )
        chat.window = ContextWindow(3_000, source=WindowSource.OPERATOR)
        await chat.send(long_message(1))
        result, events = await chat.send(long_message(2))

    assert [is_compaction(r) for r in server.requests] == [False, True, False]
    (finished,) = events.of_type("run.finished")
    assert finished["tokens"] == 2_100  # the compaction call and the answer
    assert finished["cost_usd"] == pytest.approx(2 * (1_000 * 0.15e-6 + 50 * 0.6e-6))
    assert result.state.total.iterations == 1  # housekeeping, not one of the user's calls


class SeesImages(ScriptedModel):
    """A scripted model whose count has images in it, 500 tokens each."""

    def count_tokens(self, messages):
        images = sum(image_parts(message.get("content")) for message in messages)
        return super().count_tokens(messages) + 500 * images


async def test_older_images_are_named_instead_of_sent_again():
    pictures = {1: Picture("image/png", b"one"), 2: Picture("image/png", b"two")}
    first = with_attachments("Look at this.", [Attached(1, "a.png", True)], sees_images=True)
    second = with_attachments("And this one?", [Attached(2, "b.png", True)], sees_images=True)
    model = SeesImages([Reply(text="Noted.")])
    deps = RunDeps(
        model=model,
        tree=DefaultDecisionTree(AgentConfig()),
        pictures=pictures,
        window=ContextWindow(1_000, source=WindowSource.OPERATOR),
    )
    history = [{"role": "user", "content": first}, {"role": "assistant", "content": "Noted."}]

    result = await start_run(second, deps, history=history)

    assert result.reason.value == "completed"
    (call,) = model.calls
    sent = call.messages
    assert isinstance(sent[1]["content"], str)
    assert sent[1]["content"].endswith("their documents are named above.]")
    assert [p["type"] for p in sent[-1]["content"]] == ["text", "image_url"]
    # The run keeps the message as it was.
    assert result.state.messages[1]["content"] == first


async def test_a_model_with_no_window_to_manage_is_sent_everything():
    model = ScriptedModel([Reply(text="Hello.")])
    deps = RunDeps(model=model, tree=DefaultDecisionTree(AgentConfig()))
    events = EventCollector()
    history = [{"role": "user", "content": long_message(n)} for n in range(1, 11)]

    result = await start_run("Hi", deps, history=history, on_event=events)

    assert result.reason.value == "completed"
    assert model.calls[0].messages[1:-1] == history
    assert [e for e in events.types() if e.startswith("context.")] == []


async def test_a_helper_keeps_its_own_context_inside_the_window_the_same_way():
    researcher = AgentType("researcher", "Reads.", max_iterations=8, max_tool_calls=10)

    def reads_six_pieces(index, request):  # no usage figures: the run counts its own
        if request.max_tokens:
            return Reply(text="A summary of the reading so far.", usage=None)
        read = sum(m.get("role") == "tool" for m in request.messages)
        if read < 6:
            return Reply(calls=[Call("read_document", {"offset": str(read)})], usage=None)
        return Reply(text="Owls, rivers.", usage=None)

    child_model = ScriptedModel(reads_six_pieces)

    def child_deps(kind, config, caps, parent):
        tree = DefaultDecisionTree(replace(config, token_budget=200_000), caps)
        tools = ToolRegistry([Tool.from_function(read_document)])
        return RunDeps(model=child_model, tree=tree, tools=tools, window=parent.window)

    tools = ToolRegistry([Delegation((researcher,), child_deps).tool()])
    parent_model = ScriptedModel(
        [
            Reply(calls=[Call("delegate", {"agent_type": "researcher", "task": "Read it."})]),
            Reply(text="Done."),
        ]
    )
    deps = RunDeps(
        model=parent_model,
        tree=DefaultDecisionTree(AgentConfig(token_budget=200_000)),
        tools=tools,
        window=ContextWindow(4_000, source=WindowSource.OPERATOR),
    )
    events = EventCollector()

    result = await start_run("Read the document.", deps, on_event=events)

    assert result.reason.value == "completed"
    (finished,) = events.of_type("subagent.finished")
    assert finished["reason"] == "completed"
    shown = [e["event"]["text"] for e in events.of_type("subagent.step") if "text" in e["event"]]
    assert any("to fit the model's 4,000-token context" in text for text in shown)
    last = child_model.calls[-1].messages
    assert any(
        "Call the tool again if you need it." in content_text(m.get("content")) for m in last
    )


async def test_continue_with_a_model_of_a_larger_window_answers_a_message_too_big_before():
    from agents.loop import continue_run

    question = long_message(1, words=3_000)
    small = RunDeps(
        model=ScriptedModel([], name="scripted/small"),
        tree=DefaultDecisionTree(AgentConfig()),
        window=ContextWindow(2_000, source=WindowSource.OPERATOR),
    )
    ended = await start_run(question, small)
    assert ended.reason.value == "context_window"

    large_model = ScriptedModel([Reply(text="Read it all.")], name="scripted/large")
    large = RunDeps(
        model=large_model,
        tree=DefaultDecisionTree(AgentConfig()),
        window=ContextWindow(32_000, source=WindowSource.OPERATOR),
    )
    result = await continue_run(ended.state, large)

    assert result.reason.value == "completed"
    assert result.final_text == "Read it all."
    assert large_model.calls[0].messages[1]["content"] == question
