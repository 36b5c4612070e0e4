"""Ranked full-text search over passages, on SQLite (FTS5) and PostgreSQL alike.

Questions come in natural language ("How do I change the iteration limit?"): the
words are taken out of the query (so no character of it can reach the database's
query syntax), stop words dropped, and what is left is OR-ed. A passage matching
more of the words ranks first; among those, the database's own relevance decides
(FTS5's bm25, PostgreSQL's ts_rank_cd), with the heading above the passage weighing
more than its text. Both sides stem English words ("limits" finds "limit").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import connection

MAX_TERMS = 12
MAX_TERM_CHARS = 64
_WORD = re.compile(r"[^\W_]+")

# PostgreSQL's English stop words (Snowball's list), so that both databases ignore the
# same words, and a few more that questions are made of.
_STOP_WORDS = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what
    which who whom this that these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for
    with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very s t can will just don should now
    could would may might must shall please tell know want need get got let lets ok
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())


@dataclass(frozen=True)
class SearchHit:
    """One passage found: where it is and how well it matched (higher is better)."""

    passage_id: int
    document_id: int
    title: str
    location: str
    start: int
    length: int
    text: str
    score: float


def query_terms(query: str) -> list[str]:
    """The words to look for: lower case, no stop words, no repeats, at most MAX_TERMS."""
    terms: list[str] = []
    for word in _WORD.findall(query.lower()):
        if word not in STOP_WORDS and len(word) <= MAX_TERM_CHARS and word not in terms:
            terms.append(word)
    return terms[:MAX_TERMS]


def search(terms: list[str], *, owner_id: int, limit: int) -> list[SearchHit]:
    """The best `limit` passages for `terms` among the owner's documents and the built-in
    ones, best first."""
    if not terms or limit < 1:
        return []
    build = _postgresql if connection.vendor == "postgresql" else _sqlite
    sql, params = build(terms, owner_id, limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [
        SearchHit(
            passage_id=row[0],
            document_id=row[1],
            title=row[2],
            location=row[3],
            start=row[4],
            length=row[5],
            text=row[6],
            # Matched words first, then relevance squeezed below 1: one number, same order.
            score=round(row[8] + max(row[7], 0.0) / (1.0 + max(row[7], 0.0)), 4),
        )
        for row in rows
    ]


_COLUMNS = "p.id, p.document_id, d.title, p.location, p.start, p.length, p.text"
_VISIBLE = "(d.owner_id = %s OR d.owner_id IS NULL)"
_ORDER = "ORDER BY coverage DESC, relevance DESC, p.id LIMIT %s"


def _fts5_phrase(term: str) -> str:
    """A term as an FTS5 string: quoted, so that NEAR, AND, * or - mean nothing."""
    return '"' + term.replace('"', '""') + '"'


def _sqlite(terms: list[str], owner_id: int, limit: int) -> tuple[str, list[Any]]:
    phrases = [_fts5_phrase(term) for term in terms]
    matches = (
        "(p.id IN (SELECT rowid FROM knowledge_passage_fts WHERE knowledge_passage_fts MATCH %s))"
    )
    sql = f"""
        SELECT {_COLUMNS},
               -bm25(knowledge_passage_fts, 2.0, 1.0) AS relevance,
               {" + ".join([matches] * len(terms))} AS coverage
        FROM knowledge_passage_fts
        JOIN knowledge_passage p ON p.id = knowledge_passage_fts.rowid
        JOIN knowledge_document d ON d.id = p.document_id
        WHERE knowledge_passage_fts MATCH %s AND {_VISIBLE}
        {_ORDER}
    """
    return sql, [*phrases, " OR ".join(phrases), owner_id, limit]


def _postgresql(terms: list[str], owner_id: int, limit: int) -> tuple[str, list[Any]]:
    term_query = "plainto_tsquery('english', %s)"
    # The OR-ed query written out where it is used (not joined in as a row): a constant
    # expression is what lets the planner use the GIN index.
    query = " || ".join([term_query] * len(terms))
    sql = f"""
        SELECT {_COLUMNS},
               ts_rank_cd(p.search, {query}, 1) AS relevance,
               {" + ".join([f"(p.search @@ {term_query})::int"] * len(terms))} AS coverage
        FROM knowledge_passage p
        JOIN knowledge_document d ON d.id = p.document_id
        WHERE p.search @@ ({query}) AND {_VISIBLE}
        {_ORDER}
    """
    return sql, [*terms, *terms, *terms, owner_id, limit]
