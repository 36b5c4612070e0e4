"""A conversation is named by its model after its first answer, once, and never over
a name the user gave it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from chat import services
from chat.models import Conversation, Message, Role, Run, RunEvent, RunStatus
from chat.services import conversation_create, message_post
from runs import titles

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("real_model"),
]


@pytest.fixture
def real_model() -> object:
    with override_settings(ORACLE_MODEL="openai/fake-model", ORACLE_AUTO_TITLES=True):
        yield


def completed(conversation: Conversation, question: str, answer: str) -> Run:
    _, run = message_post(conversation=conversation, content=question)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.FINISHED, reason="completed")
    conversation.refresh_from_db()
    Message.objects.create(
        conversation=conversation, run=run, seq=conversation.next_seq(),
        role=Role.ASSISTANT, content=answer, termination_reason="completed",
        metadata={"final": True},
    )  # fmt: skip
    return run


def test_the_first_answer_lets_the_model_name_the_conversation(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    run = completed(conversation, "Plan three days in Lisbon", "Day one: Alfama.")

    wanted = titles.title_wanted(run_id=str(run.pk))
    assert wanted is not None
    assert (wanted.question, wanted.answer, wanted.model) == (
        "Plan three days in Lisbon", "Day one: Alfama.", "openai/fake-model"
    )  # fmt: skip
    titles.conversation_retitle(run_id=str(run.pk), wanted=wanted, title="Lisbon in 3 days")

    conversation.refresh_from_db()
    assert conversation.title == "Lisbon in 3 days"
    event = RunEvent.objects.get(run=run, type="conversation.titled")
    assert event.data["title"] == "Lisbon in 3 days"


def test_a_name_given_meanwhile_is_kept(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    run = completed(conversation, "Plan three days in Lisbon", "Day one: Alfama.")
    wanted = titles.title_wanted(run_id=str(run.pk))
    assert wanted is not None
    services.conversation_rename(conversation=conversation, title="My trip")

    titles.conversation_retitle(run_id=str(run.pk), wanted=wanted, title="Lisbon in 3 days")

    conversation.refresh_from_db()
    assert conversation.title == "My trip"
    assert not RunEvent.objects.filter(type="conversation.titled").exists()


def test_only_the_first_completed_answer_of_an_unnamed_conversation_asks(alice: User) -> None:
    named = conversation_create(owner=alice, title="Chosen")
    assert titles.title_wanted(run_id=str(completed(named, "Hi", "Hello.").pk)) is None

    conversation = conversation_create(owner=alice)
    completed(conversation, "Hi", "Hello.")
    second = completed(conversation, "Again", "Hello again.")
    assert titles.title_wanted(run_id=str(second.pk)) is None

    with override_settings(ORACLE_AUTO_TITLES=False):
        fresh = conversation_create(owner=alice)
        assert titles.title_wanted(run_id=str(completed(fresh, "Hi", "Hello.").pk)) is None
    with override_settings(ORACLE_MODEL=""):
        offline = conversation_create(owner=alice)
        assert titles.title_wanted(run_id=str(completed(offline, "Hi", "Hello.").pk)) is None
