"""Where a passage of a document is: the address of its document's page with the span
highlighted and scrolled to (`knowledge.views.document_page`, `?start=&length=#passage`),
as a `str.format` pattern the engine fills in for each source it cites
(`agents.citations`), the offline model's quotes and the search tool's results alike;
and where a whole document is (its page), for a source cited whole (an image)."""

from __future__ import annotations

PASSAGE_LINK = "/documents/{document_id}/?start={start}&length={length}#passage"
DOCUMENT_LINK = "/documents/{document_id}/"
