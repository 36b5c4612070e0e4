"""Images attached to a message: the note tells the model which documents are images and
whether it is shown them; a model that sees images gets each beside the text of the
message that attached it (an OpenAI-style content part, its bytes in a data: URL),
while the run's saved history keeps the text alone; the prompt's estimate counts an
image as an image, not as its base64 text; and the offline model, which sees none, says
so and links the image's document instead of inventing what it shows."""

from __future__ import annotations

import base64
import json

import pytest

from agents.attachments import Attached, Picture, attachments_in, with_attachments, with_pictures
from agents.builtin_tools import builtin_tools
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, start_run
from agents.offline_model import HOW_TO_CONFIGURE, OfflineModel
from agents.testing.fake_server import FakeServer
from agents.testing.scripted import Reply, ScriptedModel
from agents.tree import DefaultDecisionTree
from tests.agents.offline_library import CORPUS, Library, ask

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
LIONS = Attached(22, "lions", image=True)
NOTES = Attached(21, "Zebra notes")
SEEN = (
    "\n\n[The user attached: lions (image, document id 22); the image is shown to you with "
    "this message.]"
)
DOCUMENT_LINK = "/documents/{document_id}/"


def test_the_note_says_which_documents_are_images_and_whether_the_model_sees_them():
    assert with_attachments("What is this?", [LIONS], sees_images=True) == "What is this?" + SEEN
    assert with_attachments("What is this?", [LIONS]) == (
        "What is this?\n\n[The user attached: lions (image, document id 22); the image is not "
        "shown to you (this model cannot see images): say so, and do not guess what it shows.]"
    )
    both = with_attachments("Compare", [NOTES, LIONS, Attached(23, "tigers", image=True)])
    assert both.endswith(
        "[The user attached: Zebra notes (document id 21), lions (image, document id 22), "
        "tigers (image, document id 23); read the document with read_document or "
        "search_documents; the images are not shown to you (this model cannot see images): "
        "say so, and do not guess what they show.]"
    )


@pytest.mark.parametrize("sees", [True, False])
def test_a_note_with_images_reads_back_as_the_message_and_its_documents(sees):
    listed = [NOTES, Attached(22, "lions, (at night)", image=True), Attached(24, "Zoo")]

    note = with_attachments("Compare\nthem", listed, sees_images=sees)

    assert attachments_in(note) == ("Compare\nthem", listed)


def test_a_model_that_sees_images_gets_each_beside_its_message():
    picture = Picture("image/png", PIXEL)
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Earlier" + SEEN},
        {"role": "assistant", "content": "A lion."},
        {"role": "user", "content": "And now?"},
    ]

    shown = with_pictures(messages, {22: picture})

    url = "data:image/png;base64," + base64.b64encode(PIXEL).decode()
    assert shown[1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Earlier" + SEEN},
            {"type": "image_url", "image_url": {"url": url}},
        ],
    }
    assert [shown[i] for i in (0, 2, 3)] == [messages[i] for i in (0, 2, 3)]
    assert messages[1]["content"] == "Earlier" + SEEN  # the history itself is not changed
    assert with_pictures(messages, {}) is messages
    assert with_pictures(messages, {99: picture}) == messages  # an image no note names


async def test_a_run_sends_the_image_and_saves_only_the_text():
    model = ScriptedModel([Reply(text="A lion, resting.")])
    deps = RunDeps(
        model=model,
        tree=DefaultDecisionTree(AgentConfig()),
        pictures={22: Picture("image/png", PIXEL)},
    )

    result = await start_run("What is this?" + SEEN, deps, on_event=EventCollector())

    asked = model.calls[0].messages[-1]
    assert asked["content"][0] == {"type": "text", "text": "What is this?" + SEEN}
    assert asked["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert result.state.messages[1] == {"role": "user", "content": "What is this?" + SEEN}
    assert "base64" not in result.state.to_json()


def test_an_image_counts_as_an_image_not_as_its_base64_text(monkeypatch):
    import litellm

    from agents.litellm_model import LiteLLMModel

    big = Picture("image/png", PIXEL + bytes(400_000))  # 530 kB of base64
    text = [{"role": "user", "content": "What is this?" + SEEN}]
    shown = with_pictures(text, {22: big})
    model = LiteLLMModel("openai/gpt-4o-mini")

    with_image = model.count_tokens(shown)

    assert model.count_tokens(text) < with_image < 2_000

    def unknown(**_: object) -> int:
        raise ValueError("no tokenizer")

    monkeypatch.setattr(litellm, "token_counter", unknown)
    assert model.count_tokens(text) < model.count_tokens(shown) < 2_000


def test_litellm_says_which_models_see_images():
    from agents.litellm_model import sees_images

    assert sees_images("openai/gpt-4o-mini")
    assert not sees_images("openai/fake-model")
    assert not sees_images("oracle/offline")


async def test_through_litellm_the_provider_gets_the_image_part():
    from agents.litellm_model import LiteLLMModel

    picture = Picture("image/png", PIXEL)
    with FakeServer([{"text": ["A lion."]}]) as server:
        deps = RunDeps(
            model=LiteLLMModel("openai/gpt-4o-mini", api_base=server.base_url, api_key="k"),
            tree=DefaultDecisionTree(AgentConfig()),
            pictures={22: picture},
        )
        result = await start_run("What is this?" + SEEN, deps, on_event=EventCollector())

    assert result.final_text == "A lion."
    (request,) = server.requests
    assert request["messages"][-1]["content"] == [
        {"type": "text", "text": "What is this?" + SEEN},
        picture.part,
    ]
    json.dumps(request)  # as it went on the wire


async def test_the_offline_model_says_it_cannot_see_the_image_and_links_it():
    note = with_attachments("What animal is this?", [LIONS])
    deps = RunDeps(
        model=OfflineModel(document_link=DOCUMENT_LINK),
        tree=DefaultDecisionTree(AgentConfig()),
        tools=builtin_tools(),
    )
    events = EventCollector()

    result = await start_run(note, deps, on_event=events)

    assert events.of_type("tool.call") == []  # nothing looked up, nothing invented
    assert result.final_text == (
        "I cannot see images: [*lions*](/documents/22/) is attached, but the offline model "
        f"reads text only, so I cannot tell you what it shows. {HOW_TO_CONFIGURE}"
    )


async def test_with_a_document_beside_the_image_it_still_answers_from_the_document():
    field = "Zebras sleep standing up, in short naps, while one of the herd keeps watch."
    library = Library(corpus={**CORPUS, 21: ("Zebra notes", [("Rest", field + " ")])})
    note = with_attachments("How do zebras sleep?", [NOTES, LIONS, Attached(23, "tigers", True)])

    asked = await ask(note, library)

    assert asked.text.startswith(
        "I cannot see images: *lions* and *tigers* are attached, but the offline model reads "
        "text only, so I cannot tell you what they show.\n\n"
    )
    assert asked.quotes == [field]
    assert library.reads[0]["document_id"] == 21
