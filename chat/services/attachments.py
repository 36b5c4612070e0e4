"""Documents attached to a message: the user's own, named by id (the composer uploads a
file into the user's documents first, `knowledge.services`), kept on the message with
their titles (and `image`, for an image); the model is told of them
(`agents.attachments`), and shown the images when it sees images (`runs.attachments`)."""

from __future__ import annotations

from typing import Any

from knowledge.selectors import MAX_ID, own_attachables
from runs.errors import InvalidInput

MAX_ATTACHMENTS = 10
NOT_A_LIST = "A list of the ids of your documents, e.g. [12, 15]."


def _document_id(value: object) -> int:
    """An id sent as a JSON number or as a form's text; InvalidInput for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.strip().isdigit():
        return int(value)
    raise InvalidInput({"documents": [NOT_A_LIST]})


def documents_to_attach(*, owner: Any, documents: object) -> list[dict[str, Any]]:
    """`documents` (ids) as a message keeps them: each once, in order, with its title
    (and `"image": True` for an image). InvalidInput, naming the first id that is not one
    of the owner's documents, when any is not; nothing is written here."""
    if not isinstance(documents, list | tuple):
        raise InvalidInput({"documents": [NOT_A_LIST]})
    ids = list(dict.fromkeys(_document_id(value) for value in documents))
    if len(ids) > MAX_ATTACHMENTS:
        raise InvalidInput({"documents": [f"At most {MAX_ATTACHMENTS} documents to a message."]})
    found = own_attachables(user=owner, ids=[i for i in ids if 0 < i <= MAX_ID])
    missing = next((i for i in ids if i not in found), None)
    if missing is not None:
        raise InvalidInput({"documents": [f"You have no document with the id {missing}."]})
    return [
        {"id": i, "title": found[i].title, **({"image": True} if found[i].image else {})}
        for i in ids
    ]
