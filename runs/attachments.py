"""What a run's model is given of the documents the user's messages attached: a note
after each message naming them (`agents.attachments`), and, for a model that sees
images (LiteLLM says so), the images themselves, loaded here from the user's documents
and put beside their messages by the engine at each call."""

from __future__ import annotations

from agents.attachments import Attached, Picture, with_attachments
from agents.offline_model import OFFLINE_MODEL_NAME
from chat.models import Message, Role, Run
from knowledge.selectors import own_images


def sees_images(model_name: str) -> bool:
    """Whether the model a run calls takes images (the offline model does not)."""
    if not model_name or model_name == OFFLINE_MODEL_NAME:
        return False
    # Imported here: LiteLLM takes seconds to import and the offline model needs none of it.
    from agents.litellm_model import sees_images as litellm_sees_images

    return litellm_sees_images(model_name)


def for_model(message: Message, *, sees_images: bool = False) -> str:
    """What the model reads of a message: its text, and for the user's, a note naming the
    documents attached to it and the tools that read them, and whether it is shown the
    images among them."""
    if message.role != Role.USER:
        return message.content
    documents = message.metadata.get("documents") or []
    attached = [Attached(int(d["id"]), str(d["title"]), bool(d.get("image"))) for d in documents]
    return with_attachments(message.content, attached, sees_images=sees_images)


def pictures_for(run: Run) -> dict[int, Picture]:
    """The images attached to the user's messages a run answers (its own and those
    before it in the conversation's current version), by document id: those still
    among the owner's documents."""
    asked = run.user_message
    if asked is None:
        return {}
    messages = Message.objects.filter(
        conversation_id=run.conversation_id, role=Role.USER, seq__lte=asked.seq, superseded=False
    ).values_list("metadata", flat=True)
    ids = [
        int(document["id"])
        for metadata in [*messages, asked.metadata]
        for document in metadata.get("documents") or []
        if document.get("image")
    ]
    if not ids:
        return {}
    found = own_images(user=run.conversation.owner, ids=ids)
    return {pk: Picture(media_type, data) for pk, (media_type, data) in found.items()}
