"""Reads for chat, always scoped by owner: another user's objects do not exist (404)."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from chat.models import Conversation, Message, Run


def _uuid(value: object) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise Http404 from None


def conversation_list(*, user: Any) -> QuerySet[Conversation]:
    return Conversation.objects.filter(owner=user)


def conversation_get(*, user: Any, conversation_id: object) -> Conversation:
    try:
        return Conversation.objects.get(owner=user, id=_uuid(conversation_id))
    except Conversation.DoesNotExist:
        raise Http404 from None


def run_get(*, user: Any, run_id: object) -> Run:
    try:
        return Run.objects.select_related("conversation").get(
            conversation__owner=user, id=_uuid(run_id)
        )
    except Run.DoesNotExist:
        raise Http404 from None


def message_list(*, conversation: Conversation) -> QuerySet[Message]:
    return conversation.messages.order_by("seq")
