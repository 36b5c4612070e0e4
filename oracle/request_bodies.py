"""The body of a form post is Django's to read, not daphne's.

Daphne, as it comes, lets Twisted's HTTP layer parse every POST body sent as a form
(multipart or URL-encoded) before the request reaches Django, only to throw the result
away; a body Twisted cannot parse (a multipart one without its boundary, say) it answers
itself with a bare 400 that Django never sees: no JSON under `/api/`, no page elsewhere,
no line in any log. Twisted has a switch for this, `parsePOSTFormSubmission`, which
daphne leaves on: its requests are made with it off here, so Django parses each body
once and its errors reach the site's own handlers (`ops.errors`, the API's JSON).
The parse it skips ran on daphne's event loop, holding every other request and socket:
for a 5 MB upload, 240 ms and 61 MB at its peak (measured with Twisted 26.10).
"""

from __future__ import annotations

from typing import Any

from daphne import http_protocol  # type: ignore[import-untyped]


def leave_form_bodies_to_django() -> None:
    """Make daphne's requests leave form bodies unparsed (once, in the web process)."""
    if getattr(http_protocol.WebRequest, "leaves_form_bodies_to_django", False):
        return

    class DjangoReadsTheBody(http_protocol.WebRequest):  # type: ignore[misc]
        leaves_form_bodies_to_django = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, "parsePOSTFormSubmission": False})

    # daphne's factory reads the name each time it builds a connection's protocol.
    http_protocol.WebRequest = DjangoReadsTheBody
