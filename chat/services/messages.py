"""A person's messages: posted (with the documents they attach), edited (the earlier
version kept) and answered again; each queues a run to answer it."""

from __future__ import annotations

from uuid import UUID, uuid4

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from chat.models import Conversation, Message, Role, Run, RunStatus
from chat.services.attachments import documents_to_attach
from knowledge.selectors import own_attachables
from runs.errors import InvalidInput, RunConflict
from runs.queue import ACTIVE, enqueue
from runs.titles import first_words


def _clean_content(content: object) -> str:
    if not isinstance(content, str):
        raise InvalidInput({"content": ["Must be text."]})
    if not content.strip():
        raise InvalidInput({"content": ["Write a message first."]})
    limit = settings.ORACLE_MAX_MESSAGE_CHARS
    if len(content) > limit:
        raise InvalidInput(
            {"content": [f"At most {limit:,} characters (this one has {len(content):,})."]}
        )
    return content


@transaction.atomic
def message_post(
    *,
    conversation: Conversation,
    content: object,
    documents: object = (),
    edit_of: Message | None = None,
) -> tuple[Message, Run]:
    """Add the user's message, with the documents it attaches (ids of the owner's own),
    and queue a run to answer it."""
    text = _clean_content(content)
    attached = documents_to_attach(owner=conversation.owner, documents=documents)
    conversation = _idle(conversation)
    titled = not conversation.title
    if titled:
        conversation.title = first_words(text)
    # The run's id is chosen first, so that the message and its run are written once
    # each (the database checks the keys between them when the transaction commits).
    run_id = uuid4()
    message = Message.objects.create(
        conversation=conversation, seq=conversation.next_seq(*(["title"] if titled else [])),
        role=Role.USER, content=text, run_id=run_id,
        metadata={
            **({"edit_of": edit_of.pk} if edit_of is not None else {}),
            **({"documents": attached} if attached else {}),
        },
    )  # fmt: skip
    message.run = _queue_answer(conversation, message, run_id=run_id)  # as written
    return message, message.run


# Why a message cannot be sent now, by what the conversation's run is doing; the
# composer says the same before it is tried (templates/chat/conversation.html).
BUSY = {
    "working": "The Oracle is still working on the last message: stop it or wait, then send this.",
    "paused": "The last answer is paused, waiting for you: continue or stop it above, "
    "then send this.",
    "approval": "The Oracle is waiting for you to approve or deny a tool call above: "
    "answer it, then send this.",
}


def busy_state(run: Run | None) -> str:
    """What keeps a message from being sent: the conversation's active `run` working,
    paused, or waiting for an approval; "" when nothing does."""
    if run is None or run.status not in ACTIVE:
        return ""
    if run.status != RunStatus.PAUSED:
        return "working"
    return "approval" if run.pending_approval else "paused"


def _idle(conversation: Conversation) -> Conversation:
    """The conversation, locked, when no run of it works; else RunConflict."""
    conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
    active = conversation.runs.filter(status__in=ACTIVE).first()
    if active is not None:
        raise RunConflict(BUSY[busy_state(active)])
    return conversation


def _queue_answer(
    conversation: Conversation, message: Message, *, run_id: UUID | None = None
) -> Run:
    run = Run.objects.create(
        id=run_id or uuid4(), conversation=conversation, pending_action="start",
        user_message=message, queued_at=timezone.now(),
    )  # fmt: skip
    enqueue(run)
    return run


def _last_user_message(conversation: Conversation) -> Message | None:
    return conversation.messages.filter(role=Role.USER, superseded=False).order_by("-seq").first()


@transaction.atomic
def run_regenerate(*, run: Run) -> Run:
    """Answer the last message again with a new run. The earlier answer stays, as an
    earlier version: shown on request, no longer read by the model."""
    conversation = _idle(run.conversation)
    last = _last_user_message(conversation)
    if last is None or run.user_message_id != last.pk:
        raise RunConflict("Only the answer to the last message can be regenerated.")
    Message.objects.filter(run__user_message=last).exclude(pk=last.pk).update(superseded=True)
    conversation.save(update_fields=["updated_at"])
    return _queue_answer(conversation, last)


@transaction.atomic
def message_edit(*, message: Message, content: object) -> tuple[Message, Run]:
    """Send a message of the conversation's current branch again, changed: the
    conversation branches there. The message and everything after it stay as the
    earlier version; the new message is answered by a new run."""
    text = _clean_content(content)
    conversation = _idle(message.conversation)
    if message.role != Role.USER:
        raise RunConflict("Only a message you sent can be edited.")
    if Message.objects.filter(pk=message.pk, superseded=True).exists():
        raise RunConflict(
            "That message is in an earlier version of the conversation: "
            "edit it in the latest version."
        )
    Message.objects.filter(conversation=conversation, seq__gte=message.seq).update(superseded=True)
    # Its attachments go with it, those still among the owner's documents.
    attached = [document["id"] for document in message.metadata.get("documents") or []]
    still = own_attachables(user=conversation.owner, ids=attached) if attached else {}
    kept = [document_id for document_id in attached if document_id in still]
    return message_post(conversation=conversation, content=text, documents=kept, edit_of=message)
