"""A person's conversations: started, renamed, deleted (with Undo), given a model;
purged for good a minute after their deletion."""

from __future__ import annotations

import contextlib
from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from agents.skills import DEFAULT_SKILL, skill_names
from chat.models import Conversation
from runs.control import run_cancel
from runs.errors import InvalidInput, RunConflict
from runs.queue import ACTIVE

TITLE_MAX = 200


def _clean_title(title: object) -> str:
    if not isinstance(title, str):
        raise InvalidInput({"title": ["Must be text."]})
    cleaned = " ".join(title.split())
    if len(cleaned) > TITLE_MAX:
        raise InvalidInput({"title": [f"At most {TITLE_MAX} characters."]})
    return cleaned


def conversation_create(
    *, owner: User, title: object = "", skill: object = DEFAULT_SKILL.name
) -> Conversation:
    """Start a conversation; its skill is chosen now and kept for all its runs."""
    if not isinstance(skill, str) or skill not in skill_names():
        known = ", ".join(skill_names())
        raise InvalidInput({"skill": [f"Unknown skill. Choose one of: {known}."]})
    return Conversation.objects.create(owner=owner, title=_clean_title(title), skill=skill)


def conversation_rename(*, conversation: Conversation, title: object) -> Conversation:
    """Give the conversation a new title. An empty one is refused: only a conversation
    not yet named is untitled (its first message names it)."""
    cleaned = _clean_title(title)
    if not cleaned:
        raise InvalidInput({"title": ["A title cannot be empty."]})
    conversation.title = cleaned
    conversation.save(update_fields=["title", "updated_at"])
    return conversation


def conversation_delete(*, conversation: Conversation) -> None:
    """Delete a conversation so that it can be brought back: it is hidden at once, its
    run stopped, and purged by `conversations_purge_deleted` a minute later."""
    now = timezone.now()
    # An update, not save(): the time it last changed stays as it was, for an Undo.
    Conversation.objects.filter(pk=conversation.pk).update(deleted_at=now)
    conversation.deleted_at = now
    for run in conversation.runs.filter(status__in=ACTIVE):
        with contextlib.suppress(RunConflict):  # it ended meanwhile
            run_cancel(run=run)


def conversation_set_model(*, conversation: Conversation, model: object) -> Conversation:
    """Use `model` for this conversation's next runs ("" = the user's own default)."""
    from settings_ui.policy import allowed_models

    if not isinstance(model, str) or (model and model not in allowed_models()):
        raise InvalidInput({"model": ["Pick one of the models this server offers."]})
    conversation.model = model
    conversation.save(update_fields=["model", "updated_at"])
    return conversation


# A deleted conversation can be restored until then; the sweeper purges it after.
PURGE_AFTER_SECONDS = 60


def conversation_restore(*, conversation: Conversation) -> Conversation:
    """Undo `conversation_delete`: the conversation comes back as it was."""
    Conversation.objects.filter(pk=conversation.pk).update(deleted_at=None)
    conversation.deleted_at = None
    return conversation


def conversations_purge_deleted() -> int:
    """Delete for good the conversations deleted more than `PURGE_AFTER_SECONDS` ago,
    with their messages, runs and events (one whose run has not stopped yet waits for
    it). Called by the workers' sweeper; returns how many went."""
    cutoff = timezone.now() - timedelta(seconds=PURGE_AFTER_SECONDS)
    expired = Conversation.objects.filter(deleted_at__lt=cutoff).exclude(runs__status__in=ACTIVE)
    batch = list(expired.values_list("pk", flat=True)[:100])
    _, deleted = Conversation.objects.filter(pk__in=batch).delete()
    return deleted.get(Conversation._meta.label, 0)
