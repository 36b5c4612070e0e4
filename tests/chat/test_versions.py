"""Regenerate the last answer, edit the last message, and pick a conversation's model:
earlier versions stay (each with its run), and only the current one is what the model
reads next."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from chat import services
from chat.models import Conversation, Message, Role, Run, RunStatus
from chat.services import conversation_create, message_post
from runs.engine import model_name_for
from runs.runner import claim

pytestmark = pytest.mark.django_db(transaction=True)


def answered(conversation: Conversation, question: str, answer: str) -> tuple[Message, Run]:
    """The user's message and its run, finished with `answer` (no worker needed)."""
    message, run = message_post(conversation=conversation, content=question)
    Run.objects.filter(pk=run.pk).update(
        status=RunStatus.FINISHED, reason="completed", tokens=10, pending_action=""
    )
    seq = next_seq(conversation)
    Message.objects.create(
        conversation=conversation, run=run, seq=seq, role=Role.ASSISTANT, content=answer,
        termination_reason="completed", metadata={"final": True},
    )  # fmt: skip
    run.refresh_from_db()
    return message, run


def next_seq(conversation: Conversation) -> int:
    conversation.refresh_from_db()
    return conversation.next_seq()


def history_of(run: Run) -> list[dict[str, str]]:
    Run.objects.filter(pk=run.pk).update(status=RunStatus.QUEUED)
    job = claim(str(run.pk))
    assert job is not None
    return [*job.history, {"role": "user", "content": job.question}]


def test_regenerate_answers_the_same_message_again_and_keeps_the_first_answer(
    alice: User,
) -> None:
    conversation = conversation_create(owner=alice)
    question, first = answered(conversation, "Name a colour", "Red.")

    second = services.run_regenerate(run=first)

    assert second.pk != first.pk and second.user_message_id == question.pk
    assert second.status == RunStatus.QUEUED
    old_answer = Message.objects.get(run=first, role=Role.ASSISTANT)
    assert old_answer.superseded and old_answer.content == "Red."  # kept, as version 1
    assert not Message.objects.get(pk=question.pk).superseded


def test_the_next_message_reads_only_the_current_versions(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    _, first = answered(conversation, "Name a colour", "Red.")
    second = services.run_regenerate(run=first)
    Run.objects.filter(pk=second.pk).update(status=RunStatus.FINISHED, reason="completed")
    Message.objects.create(
        conversation=conversation, run=second, seq=next_seq(conversation),
        role=Role.ASSISTANT, content="Blue.", termination_reason="completed",
        metadata={"final": True},
    )  # fmt: skip
    _, third = message_post(conversation=conversation, content="Why that one?")

    assert history_of(third) == [
        {"role": "user", "content": "Name a colour"},
        {"role": "assistant", "content": "Blue."},
        {"role": "user", "content": "Why that one?"},
    ]


def test_editing_the_last_message_sends_it_again_and_keeps_the_first_version(
    alice: User,
) -> None:
    conversation = conversation_create(owner=alice)
    answered(conversation, "Hello", "Hi.")
    question, _ = answered(conversation, "Name a colur", "Pardon?")

    edited, run = services.message_edit(message=question, content="Name a colour")

    assert edited.metadata["edit_of"] == question.pk
    assert run.user_message_id == edited.pk and run.status == RunStatus.QUEUED
    assert Message.objects.get(pk=question.pk).superseded
    assert Message.objects.get(content="Pardon?").superseded
    assert history_of(run) == [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi."},
        {"role": "user", "content": "Name a colour"},
    ]


def test_only_the_last_answer_can_be_regenerated_and_nothing_redone_while_a_run_works(
    alice: User,
) -> None:
    conversation = conversation_create(owner=alice)
    first_question, first = answered(conversation, "One", "1.")
    answered(conversation, "Two", "2.")

    with pytest.raises(services.RunConflict):
        services.run_regenerate(run=first)
    _, working = message_post(conversation=conversation, content="Three")
    with pytest.raises(services.RunConflict):
        services.run_regenerate(run=working)
    with pytest.raises(services.RunConflict):
        services.message_edit(message=first_question, content="Uno")
    with pytest.raises(services.InvalidInput):
        services.message_edit(message=first_question, content="   ")
    assert Message.objects.filter(superseded=True).count() == 0  # nothing changed


def test_editing_an_earlier_message_branches_the_conversation_from_there(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    answered(conversation, "One", "1.")
    second, _ = answered(conversation, "Two", "2.")
    answered(conversation, "Three", "3.")

    edited, run = services.message_edit(message=second, content="Deux")

    assert edited.metadata["edit_of"] == second.pk
    assert set(Message.objects.filter(superseded=True).values_list("content", flat=True)) == {
        "Two",
        "2.",
        "Three",
        "3.",
    }  # the earlier branch, kept
    assert history_of(run) == [
        {"role": "user", "content": "One"},
        {"role": "assistant", "content": "1."},
        {"role": "user", "content": "Deux"},
    ]


def test_a_message_of_an_earlier_branch_cannot_be_edited(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    answered(conversation, "One", "1.")
    second, _ = answered(conversation, "Two", "2.")
    third, _ = answered(conversation, "Three", "3.")
    _, run = services.message_edit(message=second, content="Deux")
    Run.objects.filter(pk=run.pk).update(status=RunStatus.FINISHED, reason="completed")
    kept = list(Message.objects.values_list("pk", "superseded"))

    for message in (second, third):
        with pytest.raises(services.RunConflict, match="earlier version"):
            services.message_edit(message=message, content="Drei")

    assert list(Message.objects.values_list("pk", "superseded")) == kept


def test_the_page_keeps_an_earlier_branch_whole_behind_its_version_switch(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    answered(conversation, "One", "Eins.")
    second, _ = answered(conversation, "Two", "Zwei.")
    answered(conversation, "Three", "Drei.")
    _, run = services.message_edit(message=second, content="Deux")
    Run.objects.filter(pk=run.pk).update(status=RunStatus.FINISHED, reason="completed")
    Message.objects.create(
        conversation=conversation, run=run, seq=next_seq(conversation),
        role=Role.ASSISTANT, content="Deux answered.", termination_reason="completed",
        metadata={"final": True},
    )  # fmt: skip
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    messages = page[page.index('id="messages"') :]
    earlier = messages[messages.index('data-version="1" hidden') :]
    earlier = earlier[: earlier.index('data-version="2"')]
    # version 1 of the second turn holds the rest of its branch, hidden
    assert all(text in earlier for text in (">Two<", "Zwei.", ">Three<", "Drei."))
    assert "Deux" not in earlier
    assert "edit-message" not in earlier  # an earlier branch is read, not edited
    latest = messages[messages.index('data-version="2"') :]
    assert "Deux answered." in latest and "Three" not in latest
    assert messages.count('class="edit-message"') == 2  # One and Deux


@override_settings(ORACLE_MODELS=["openai/small", "openai/large"], ORACLE_MODEL="openai/small")
def test_a_conversation_can_use_another_allowed_model(alice: User) -> None:
    conversation = conversation_create(owner=alice)

    services.conversation_set_model(conversation=conversation, model="openai/large")
    assert model_name_for(conversation, user_choice="") == "openai/large"

    with pytest.raises(services.InvalidInput):
        services.conversation_set_model(conversation=conversation, model="openai/secret")
    conversation.refresh_from_db()
    assert conversation.model == "openai/large"  # a refused choice changes nothing

    services.conversation_set_model(conversation=conversation, model="")
    assert model_name_for(conversation, user_choice="openai/large") == "openai/large"
    assert model_name_for(conversation, user_choice="") == "openai/small"


@override_settings(ORACLE_MODELS=["openai/small", "openai/large"], ORACLE_MODEL="openai/small")
def test_the_model_picker_posts_and_refuses_what_is_not_allowed(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    client.force_login(alice)
    page = client.get(f"/c/{conversation.id}/").content.decode()
    assert 'name="model"' in page and "openai/large" in page

    answer = client.post(f"/c/{conversation.id}/model/", {"model": "openai/large"})
    assert answer.status_code in (200, 302)
    conversation.refresh_from_db()
    assert conversation.model == "openai/large"

    refused = client.post(f"/c/{conversation.id}/model/", {"model": "openai/secret"})
    assert refused.status_code == 400
    conversation.refresh_from_db()
    assert conversation.model == "openai/large"


def test_the_page_shows_versions_with_the_latest_in_view(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    _, first = answered(conversation, "Name a colour", "Red.")
    second = services.run_regenerate(run=first)
    Run.objects.filter(pk=second.pk).update(status=RunStatus.FINISHED, reason="completed")
    Message.objects.create(
        conversation=conversation, run=second, seq=next_seq(conversation),
        role=Role.ASSISTANT, content="Blue.", termination_reason="completed",
        metadata={"final": True},
    )  # fmt: skip
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    assert page.count("Name a colour") >= 1 and "Red." in page and "Blue." in page
    assert "2 / 2" in page
    red, blue = page.index("Red."), page.index("Blue.")
    assert page.rfind("hidden", 0, red) > page.rfind("data-version", 0, red)  # 1/2 hidden
    assert page.rfind("hidden", 0, blue) < page.rfind("data-version", 0, blue)  # 2/2 shown
