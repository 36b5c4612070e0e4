"""How an answer cites a passage of the user's documents: the document's title and its
section, as a Markdown link that opens the passage when the app says where passages are.

The engine knows no addresses: the app passes a `str.format` pattern with
`{document_id}`, `{start}` and `{length}` (knowledge.citations.PASSAGE_LINK), and one
with `{document_id}` alone for a document cited whole (knowledge.citations.DOCUMENT_LINK)."""

from __future__ import annotations

import re

_ENDS_LINK_TEXT = re.compile(r"[\\\[\]]")  # what would end a link's text early


def citation(
    *, title: str, location: str | None, document_id: int, start: int, length: int, link: str | None
) -> str:
    """'*Title*, Location' (the title alone without a location), linked to `length`
    characters of the document from `start` when `link` is a pattern."""
    label = f"*{title}*" + (f", {location}" if location else "")
    if link is None:
        return label
    address = link.format(document_id=document_id, start=start, length=length)
    text = _ENDS_LINK_TEXT.sub(lambda found: "\\" + found.group(), label)
    return f"[{text}]({address})"


def document_citation(*, title: str, document_id: int, link: str | None) -> str:
    """'*Title*', linked to the document's page when `link` is a pattern."""
    label = f"*{title}*"
    if link is None:
        return label
    text = _ENDS_LINK_TEXT.sub(lambda found: "\\" + found.group(), label)
    return f"[{text}]({link.format(document_id=document_id)})"
