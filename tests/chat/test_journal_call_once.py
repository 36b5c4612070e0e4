"""A call that may act begins only once the database knows it began: a worker lost in
the middle of it leaves a state that says so, and the run resumed from there never
makes the call again (`agents.run.tool_step`)."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User

from agents.config import AgentConfig
from agents.loop import RunDeps, start_run
from agents.run.deps import tool_context
from agents.testing.scripted import Call, Reply, ScriptedModel
from agents.tools import Tool, ToolRegistry
from agents.tree import DefaultDecisionTree
from chat.models import Run
from runs.journal import DatabaseThread, Journal
from tests.chat.test_journal import Redis, new_run, recording

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_call_that_may_act_begins_once_its_mark_is_written(alice: User) -> None:
    run = await sync_to_async(new_run)(alice)
    database = DatabaseThread()
    journal = Journal(database, Redis(), interval=0.5)  # ticks far apart, unless hurried
    writing = asyncio.create_task(journal.run_forever())
    (recorder,) = recording(journal, run)
    seen: list[tuple[str, list[str]]] = []

    async def act(text: str = "") -> str:
        context = tool_context()
        assert context is not None
        stored = await sync_to_async(
            lambda: Run.objects.get(pk=run.pk).state, thread_sensitive=False
        )()
        seen.append((context.call_id, (stored or {}).get("step_started", [])))
        return f"acted on {text}"

    tool = Tool.from_schema(
        name="ops__act", description="Act.", function=act,
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    )  # fmt: skip
    model = ScriptedModel([Reply(calls=[Call("ops__act", {"text": "prod"})]), Reply(text="Done.")])
    deps = RunDeps(model=model, tree=DefaultDecisionTree(AgentConfig()), tools=ToolRegistry([tool]))

    result = await start_run(
        "Act", deps, on_event=recorder, on_checkpoint=recorder.checkpoint, run_id=str(run.pk)
    )
    await recorder.close()
    writing.cancel()
    database.close()

    assert result.final_text == "Done."
    ((call_id, marked),) = seen
    assert marked == [call_id]  # the database knew the call began before it acted
