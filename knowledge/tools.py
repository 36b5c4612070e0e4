"""The knowledge base as tools for the Oracle: search the user's documents, read one,
list them.

Both answer JSON. They are sync functions (they query the database), which the
engine runs in a thread of their own; each gives its thread's connection back when
it returns.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db import connection, connections
from django.http import Http404

from agents.citations import citation
from agents.tools import Tool, ToolError
from knowledge import selectors
from knowledge.citations import PASSAGE_LINK

SEARCH_LIMIT_MAX = 10
READ_LENGTH_MAX = 8000
LIST_LIMIT_MAX = 20
OPENING_LENGTH = 600  # of each document listed: enough for a sentence or two
SECTIONS_LISTED = 12
F = TypeVar("F", bound=Callable[..., Any])


def _own_connection(function: F) -> F:
    """Close this thread's database connections after the call (a pooled one goes back
    to the pool); not inside a transaction, where the caller (a test) owns it."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        finally:
            if not connection.in_atomic_block:
                connections.close_all()

    return wrapper  # type: ignore[return-value]


def document_tools(user_id: int) -> list[Tool]:
    """`search_documents` and `read_document` over what `user_id` may read: their own
    documents and Oracle's built-in user guide; `list_documents`, their own."""
    user = User(pk=user_id)  # only its id is used, to scope every query

    @_own_connection
    def search_documents(query: str, limit: int = 5) -> str:
        """Search the user's documents and Oracle's user guide for the passages that best
        answer a question, best first. Each result gives the document's id and title, the
        location (heading) of the passage, its start and length in the document's text,
        the passage, and `cite`: a Markdown link that opens the passage on its document's
        page. When your answer uses a passage, cite it with its `cite` link, as it is
        given. read_document reads more around a passage.

        Args:
            query: what to look for, in plain words; a whole question works
            limit: how many passages to return, 1 to 10 (default 5)
        """
        if not query.strip():
            raise ToolError("the query is empty: say what to look for")
        limit = min(max(limit, 1), SEARCH_LIMIT_MAX)
        hits = selectors.search_passages(user=user, query=query, limit=limit)
        results = [
            {
                "document_id": hit.document_id,
                "title": hit.title,
                "location": hit.location,
                "start": hit.start,
                "length": hit.length,
                "text": hit.text,
                "cite": citation(
                    title=hit.title,
                    location=hit.location,
                    document_id=hit.document_id,
                    start=hit.start,
                    length=hit.length,
                    link=PASSAGE_LINK,
                ),
            }
            for hit in hits
        ]
        return json.dumps({"query": query, "results": results}, ensure_ascii=False)

    @_own_connection
    def read_document(document_id: int, start: int = 0, length: int = 2000) -> str:
        """Read part of one of the user's documents (or Oracle's user guide) by its id,
        from a character offset. The answer gives the document's total length, so you can
        read on from where it ends.

        Args:
            document_id: the document's id, as search_documents gives it
            start: the character offset to start at (0 is the beginning)
            length: how many characters to read, 1 to 8000 (default 2000)
        """
        length = min(max(length, 1), READ_LENGTH_MAX)
        try:
            piece = selectors.read_text(
                user=user, document_id=document_id, start=start, length=length
            )
        except Http404:
            raise ToolError(f"no document with id {document_id}") from None
        except selectors.OutOfRange as problem:
            raise ToolError(str(problem)) from None
        body = {
            "document_id": piece.document_id,
            "title": piece.title,
            "start": piece.start,
            "length": piece.length,
            "total_length": piece.total_length,
            "text": piece.text,
        }
        return json.dumps(body, ensure_ascii=False)

    @_own_connection
    def list_documents(limit: int = 10) -> str:
        """List the user's own documents, newest first (Oracle's user guide is not listed;
        search_documents searches it too): how many there are, and for each its id, title,
        total length, the locations (headings) of its sections and the start of its text,
        to see what each is about. read_document reads any of them on.

        Args:
            limit: how many documents to list, 1 to 20 (default 10)
        """
        limit = min(max(limit, 1), LIST_LIMIT_MAX)
        total, openings = selectors.document_openings(
            user=user, limit=limit, opening_length=OPENING_LENGTH, sections=SECTIONS_LISTED
        )
        documents = [
            {
                "document_id": opening.document_id,
                "title": opening.title,
                "total_length": opening.total_length,
                "sections": list(opening.sections),
                "opening": opening.opening,
            }
            for opening in openings
        ]
        return json.dumps({"total": total, "documents": documents}, ensure_ascii=False)

    # They only read: a call a lost worker cut runs again (agents.run.tool_step).
    return [
        replace(Tool.from_function(search_documents, name="search_documents"), idempotent=True),
        replace(Tool.from_function(read_document, name="read_document"), idempotent=True),
        replace(Tool.from_function(list_documents, name="list_documents"), idempotent=True),
    ]
