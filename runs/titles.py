"""A conversation's title: its first words until the model names it, after its first
run completes (the worker's host asks the model)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction

from agents.offline_model import OFFLINE_MODEL_NAME
from agents.state import TerminationReason
from agents.titles import suggest_title
from chat.models import Conversation, Role, Run
from runs.engine import model_for
from runs.events import append_events, publish_events

logger = logging.getLogger(__name__)
# Runs a function in a database thread (`runs.journal.DatabaseThread`).
DatabaseWork = Callable[..., Awaitable[Any]]


def first_words(text: str) -> str:
    """A conversation's title until its model names it: its first message's start."""
    return " ".join(text.split())[:60]


@dataclass(frozen=True)
class TitleRequest:
    """What the model is asked to name a conversation from (`runs.host` asks it)."""

    conversation_id: UUID
    title: str  # the title it has now (the first words of the question)
    question: str
    answer: str
    model: str


def title_wanted(*, run_id: str) -> TitleRequest | None:
    """The conversation's first run completed and nobody named it yet: the model may.
    None when automatic titles are off, or the built-in offline model answered."""
    from runs.engine import model_name_for, user_config

    if not settings.ORACLE_AUTO_TITLES:
        return None
    run = Run.objects.select_related("conversation__owner", "user_message").get(pk=run_id)
    conversation, question = run.conversation, run.user_message
    if (
        run.reason != TerminationReason.COMPLETED
        or question is None
        or conversation.title != first_words(question.content)
        or conversation.runs.exclude(pk=run.pk).exists()
    ):
        return None
    model = model_name_for(conversation, user_choice=user_config(conversation.owner)[0].model)
    final = run.messages.filter(role=Role.ASSISTANT, termination_reason="completed").last()
    if not model or model == OFFLINE_MODEL_NAME or final is None:
        return None
    return TitleRequest(conversation.pk, conversation.title, question.content, final.content, model)


def conversation_retitle(*, run_id: str, wanted: TitleRequest, title: str) -> None:
    """Give the conversation the model's title, unless someone renamed it meanwhile,
    and show it on its pages (a `conversation.titled` event of the run)."""
    if not title or title == wanted.title:
        return
    with transaction.atomic():
        renamed = Conversation.objects.filter(pk=wanted.conversation_id, title=wanted.title)
        if not renamed.update(title=title):
            return
        run = Run.objects.select_for_update().get(pk=run_id)
        events = append_events(run, [{"type": "conversation.titled", "title": title}])
    publish_events(run, events)


async def retitle(claims: DatabaseWork, run_id: str) -> None:
    """After a conversation's first answer, its model names it."""

    try:
        wanted = await claims(title_wanted, run_id=run_id)
        if wanted is None:
            return
        title = await suggest_title(model_for(wanted.model), wanted.question, wanted.answer)
        await claims(conversation_retitle, run_id=run_id, wanted=wanted, title=title)
    except Exception:  # a title is a nicety: the conversation keeps the one it has
        logger.exception("run %s: could not name its conversation", run_id)
