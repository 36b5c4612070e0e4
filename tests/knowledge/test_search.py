"""Search: natural-language questions find the passage that matches most of their words,
English stems match ("limits" finds "limit"), no query can break it, a user only ever
finds their own documents and the guide, and SQLite and PostgreSQL agree."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledge.search import query_terms
from knowledge.selectors import search_passages
from tests.knowledge.conftest import under, upload

pytestmark = pytest.mark.django_db

GARDEN = """# Garden notes

## Tomatoes

Water tomatoes deeply twice a week. Tomato plants need full sun and support stakes.

## Roses

Prune roses in late winter. Roses like rich soil and regular feeding.

## Compost

Turn the compost heap every two weeks; keep it as damp as a wrung-out sponge.
"""
BICYCLE = """# Bicycle repair

## Brakes

Adjust the brake cable when the lever pulls too far. Replace worn brake pads.

## Chain

Clean and oil the chain every month; a stretched chain wears the gears.

## Tyres

Pump the tyres to the pressure printed on the sidewall. Mend a puncture with a repair kit.
"""
KITCHEN = """<html><head><title>Kitchen</title></head><body>
<h2>Bread</h2><p>Knead the dough ten minutes and let it rise in a warm place.</p>
<h2>Soup</h2><p>Simmer the vegetables in stock and season with salt at the end.</p>
</body></html>"""

# The same answers on SQLite (FTS5, bm25) and PostgreSQL (tsvector, ts_rank_cd): the
# suite runs again on PostgreSQL in CI (.ci/run).
EXPECTED_TOP = [
    ("How often should I water the tomatoes?", ["Tomatoes"]),
    ("my brake pads are worn", ["Brakes"]),
    ("When do you prune roses?", ["Roses"]),
    ("Which oil for a bicycle chain?", ["Chain"]),
    ("letting the dough rise", ["Bread"]),
    ("how to repair a puncture", ["Tyres", "Brakes"]),
    ("salted soups", ["Soup"]),
    ("compost heaps", ["Compost"]),
    ("supporting tomato plants in the sun", ["Tomatoes"]),
]


@pytest.fixture
def corpus(alice: User) -> None:
    upload(alice, "garden.md", GARDEN)
    upload(alice, "bicycle.md", BICYCLE)
    upload(alice, "kitchen.html", KITCHEN)


@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize(("query", "expected"), EXPECTED_TOP)
def test_both_databases_rank_the_same_passages_first(
    alice: User, query: str, expected: list[str]
) -> None:
    hits = search_passages(user=alice, query=query, limit=5)

    found = [hit.location for hit in hits][: len(expected)]
    assert found == expected, f"on {connection.vendor}: {[h.location for h in hits]}"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.usefixtures("corpus")
def test_the_passage_matching_most_words_comes_first(alice: User) -> None:
    # "chain" alone appears twice in one passage; "worn brake pads" all three in another.
    hits = search_passages(user=alice, query="chain worn brake pads", limit=3)

    assert hits[0].location == "Brakes"
    assert {h.location for h in hits[:2]} == {"Brakes", "Chain"}


def test_english_stems_match_both_ways(alice: User) -> None:
    upload(alice, "a.md", "# Farm\n\nEach harvest has a quota.")
    upload(alice, "b.md", "# Barn\n\nThe farmer counted many quotas and harvests.")

    for query in ("quotas", "quota", "harvests", "harvest", "harvesting"):
        assert len(search_passages(user=alice, query=query)) == 2, query


def test_a_question_of_stop_words_only_finds_nothing(alice: User) -> None:
    upload(alice, "a.md", "# Notes\n\nThe what and the how of it.")

    assert search_passages(user=alice, query="What is the how of it?") == []
    assert query_terms("How do I change THE iteration limit?") == ["change", "iteration", "limit"]


NASTY = [
    '"', '""', "'", "*", "-", "^", ":", "(", ")", "NEAR", "NEAR(a b)", "a NEAR/2 b",
    "AND", "OR", "NOT", "title:zebra", "zebra*", "-zebra", '"zebra', "zebra AND OR NOT",
    "{location text}: zebra", "a + b", "\\", "%", "_", "zebra'; DROP TABLE knowledge_passage; --",
    "\x00zebra", "ζέβρα", "🦓 zebra", "x" * 5000, " ".join(["zebra"] * 500),
]  # fmt: skip


@pytest.mark.parametrize("query", NASTY)
def test_query_syntax_in_a_question_is_only_words(alice: User, query: str) -> None:
    upload(alice, "z.md", "# Zebras\n\nA zebra has stripes.")

    hits = search_passages(user=alice, query=query, limit=10)

    own = [hit.location for hit in hits if hit.title != "Oracle user guide"]
    assert own == (["Zebras"] if "zebra" in query.lower() and len(query) < 5000 else [])


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=80))
def test_no_query_fails(alice: User, query: str) -> None:
    search_passages(user=alice, query=query, limit=3)


def test_a_user_never_finds_another_users_passages(alice: User, bob: User) -> None:
    upload(alice, "alice.md", "# Secrets\n\nThe zebra code is 1234.")
    upload(bob, "bob.md", "# Bob\n\nBob's zebra is called Stripes.")

    assert [h.text for h in search_passages(user=bob, query="zebra code")] == [
        "# Bob\n\nBob's zebra is called Stripes."
    ]


def test_the_guide_answers_how_to_change_the_iteration_limit(alice: User) -> None:
    hits = search_passages(user=alice, query="How do I change the iteration limit?", limit=3)

    top = hits[0]
    assert top.title == "Oracle user guide"
    assert top.location == under("Settings", "Changing a limit")
    assert "open Settings" in top.text
    assert "**Max iterations**" in top.text


@pytest.mark.parametrize(
    ("question", "location"),
    [
        ("What does the pause action do?", under("What happens at a limit", "Pause")),
        ("How do I set ORACLE_API_BASE for Ollama?", "Choosing a model"),
        ("What does the Interrupted badge mean?", "System messages and reason badges"),
        ("Can subagents delegate?", "Subagents"),
        ("What is the quick answer skill?", "Skills"),
        ("How big can an uploaded PDF be?", "Documents"),
    ],
)
def test_the_guide_answers_questions_about_oracle(
    alice: User, question: str, location: str
) -> None:
    assert search_passages(user=alice, query=question, limit=1)[0].location == location
