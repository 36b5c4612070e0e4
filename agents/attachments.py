"""Documents the user attached to a message, as the model reads them: a note after the
message's text naming each document and its id (and which are images), saying which
tools read the documents and whether the model is shown the images; and the images
themselves, put beside the text of the message that attached them when the model
sees images (`with_pictures`).

The app writes the note (a message's text for the model) and loads the images'
bytes; the offline model reads the note back to know which documents the question
is about, and `with_pictures` to know where each image goes.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from agents.model import Message

_READ = "with read_document or search_documents"
_DOCUMENTS = {
    (False, 1): f"read it {_READ}",
    (False, 2): f"read them {_READ}",
    (True, 1): f"read the document {_READ}",
    (True, 2): f"read the documents {_READ}",
}
_IMAGES = {
    (True, 1): "the image is shown to you with this message",
    (True, 2): "the images are shown to you with this message",
    (False, 1): "the image is not shown to you (this model cannot see images): say so, "
    "and do not guess what it shows",
    (False, 2): "the images are not shown to you (this model cannot see images): say so, "
    "and do not guess what they show",
}
_TAILS = [
    *(_DOCUMENTS[False, n] for n in (1, 2)),
    *_IMAGES.values(),
    *(f"{_DOCUMENTS[True, d]}; {images}" for d in (1, 2) for images in _IMAGES.values()),
]
_NOTE = re.compile(
    r"\n\n\[The user attached: (?P<listed>.*document id \d+\)); (?:"
    + "|".join(re.escape(tail) for tail in _TAILS)
    + r")\.\]\Z",
    re.DOTALL,
)
_LISTED = re.compile(
    r"(?P<title>.*?) \((?P<image>image, )?document id (?P<id>\d+)\)(?:, |\Z)", re.DOTALL
)


@dataclass(frozen=True)
class Attached:
    """A document attached to a message: its id, its title, and whether it is an image."""

    document_id: int
    title: str
    image: bool = False


@dataclass(frozen=True)
class Picture:
    """An attached image as a model that sees images is shown it: its bytes and MIME type."""

    media_type: str
    data: bytes

    @cached_property
    def part(self) -> dict[str, Any]:
        """The image as an OpenAI-style content part, its bytes in a `data:` URL (made
        once: every call of a run sends it again)."""
        encoded = base64.b64encode(self.data).decode("ascii")
        return {
            "type": "image_url",
            "image_url": {"url": f"data:{self.media_type};base64,{encoded}"},
        }


def with_attachments(text: str, attached: Sequence[Attached], *, sees_images: bool = False) -> str:
    """`text` followed by the note naming the `attached` documents (none: `text` alone);
    `sees_images`: the model is shown the images, else it is told it cannot see them."""
    if not attached:
        return text
    listed = ", ".join(
        f"{' '.join(a.title.split())} ({'image, ' if a.image else ''}document id {a.document_id})"
        for a in attached
    )
    images = sum(a.image for a in attached)
    documents = len(attached) - images
    how = [_DOCUMENTS[bool(images), min(documents, 2)]] if documents else []
    if images:
        how.append(_IMAGES[sees_images, min(images, 2)])
    return f"{text}\n\n[The user attached: {listed}; {'; '.join(how)}.]"


def attachments_in(text: str) -> tuple[str, list[Attached]]:
    """A message's own text, and the documents its note names (none without a note)."""
    note = _NOTE.search(text)
    if note is None:
        return text, []
    listed = [
        Attached(int(found["id"]), found["title"], bool(found["image"]))
        for found in _LISTED.finditer(note["listed"])
    ]
    return text[: note.start()], listed


def with_pictures(
    messages: Sequence[Message], pictures: Mapping[int, Picture]
) -> Sequence[Message]:
    """The messages as a model that sees images is sent them: each user message whose
    note names images among `pictures` (by document id) becomes its text followed by
    those images, as content parts. Without pictures, `messages` themselves."""
    if not pictures:
        return messages
    shown = list(messages)
    for index, message in enumerate(shown):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str):
            continue
        _, attached = attachments_in(content)
        parts = [
            pictures[a.document_id].part for a in attached if a.image and a.document_id in pictures
        ]
        if parts:
            shown[index] = {**message, "content": [{"type": "text", "text": content}, *parts]}
    return shown
