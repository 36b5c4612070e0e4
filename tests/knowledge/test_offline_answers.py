"""The built-in offline model answers from the real knowledge base, as a run does: the
tools a run gets (`runs.tools.run_tools`), the database's search, quoted sources."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import Client

from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, RunResult, start_run
from agents.offline_model import OfflineModel
from agents.tree import create_tree
from knowledge.citations import PASSAGE_LINK
from runs.tools import run_tools
from tests.knowledge.conftest import upload

pytestmark = pytest.mark.django_db(transaction=True)

FIELD_GUIDE = """# Birds of the marsh

## Herons

Grey herons stand still in shallow water for long minutes before they strike.
They nest in colonies called heronries, high in the trees near the water.

## Owls

Barn owls hunt at night by sound alone: their facial disc funnels the faint rustle
of a vole to their ears. They swallow small prey whole.
"""


async def ask(
    user: User, question: str, *, passage_link: str | None = None
) -> tuple[RunResult, EventCollector]:
    deps = RunDeps(
        model=OfflineModel(passage_link=passage_link),
        tree=create_tree("default", AgentConfig()),
        tools=await sync_to_async(run_tools)(user_id=user.pk),
    )
    events = EventCollector()
    return await start_run(question, deps, on_event=events), events


async def test_it_answers_from_an_uploaded_document_with_the_passage_quoted(
    alice: User,
) -> None:
    await sync_to_async(upload)(alice, "marsh.md", FIELD_GUIDE, title="Marsh field guide")

    result, events = await ask(alice, "How do barn owls hunt?")

    calls = [event["name"] for event in events.of_type("tool.call")]
    assert calls[0] == "search_documents"
    assert result.reason is not None and result.reason.value == "completed"
    answer = result.final_text
    assert "> Barn owls hunt at night by sound alone" in answer
    assert "— *Marsh field guide*, Owls" in answer


async def test_its_citation_opens_the_document_at_the_sentence_it_quoted(
    alice: User, client: Client
) -> None:
    await sync_to_async(upload)(alice, "marsh.md", FIELD_GUIDE, title="Marsh field guide")

    result, _ = await ask(alice, "How do barn owls hunt?", passage_link=PASSAGE_LINK)

    sentence = FIELD_GUIDE[FIELD_GUIDE.index("Barn owls") : FIELD_GUIDE.index("ears.") + 5]
    link = re.search(r"— \[\*Marsh field guide\*, Owls\]\((/documents/[^)]+)\)", result.final_text)
    assert link is not None, result.final_text
    await sync_to_async(client.force_login)(alice)
    page = (await sync_to_async(client.get)(link.group(1))).content.decode()
    marked = "".join(re.findall(r'<mark class="cited"[^>]*>([^<]*)</mark>', page))
    assert marked == sentence


async def test_it_answers_a_question_about_the_app_from_the_built_in_guide(alice: User) -> None:
    result, _ = await ask(alice, "How do I change the iteration limit in this app?")

    answer = result.final_text
    assert "Max iterations" in answer
    assert "— *Oracle user guide*, Settings › Changing a limit" in answer  # noqa: RUF001


async def test_another_users_document_is_not_there_for_its_answer(alice: User, bob: User) -> None:
    await sync_to_async(upload)(alice, "marsh.md", FIELD_GUIDE, title="Marsh field guide")

    result, _ = await ask(bob, "How do barn owls hunt?")

    assert "Barn owls" not in result.final_text
    assert "found nothing" in result.final_text.lower()


async def test_it_summarises_the_users_documents_in_their_own_words(alice: User) -> None:
    await sync_to_async(upload)(alice, "marsh.md", FIELD_GUIDE, title="Marsh field guide")

    result, events = await ask(alice, "Summarise my documents")

    assert [event["name"] for event in events.of_type("tool.call")] == ["list_documents"]
    answer = result.final_text
    assert answer.startswith("You have 1 document.")
    assert "**Marsh field guide** (sections: Herons, Owls)" in answer
    assert "> Grey herons stand still in shallow water for long minutes" in answer
    assert "Oracle user guide" not in answer


async def test_with_no_documents_it_says_where_to_add_some(alice: User) -> None:
    result, _ = await ask(alice, "what are my documents about?")

    assert result.final_text.startswith("You have no documents yet.")
    assert "Documents page" in result.final_text
