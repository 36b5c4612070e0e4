"""The knowledge base under load: index 1,000 generated documents (about 10 MB of text),
then time `search_documents` calls, on SQLite and (when it answers) PostgreSQL.

    .venv/bin/python bench/search.py [--documents 1000] [--queries 250] [--database both]

Each database runs in a child process of its own on a scratch database (a temporary
SQLite file; a new PostgreSQL database on 127.0.0.1:5432, dropped afterwards), so that
the settings read DATABASE_URL as `make run` does. The corpus and the queries come from a
fixed seed: every run measures the same work. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"
SEED = 14

# Words people write with, in roughly the shares they do (the stop words included).
_COMMON = (
    "the of and to a in is it that for on was with as be by this are from at or an have not "
    "they which one you were all we can her has there been if more when will would who so no "
    "out up into them some could time these two may then do first any my now such like our "
    "over man me even most made after also did many before must through back years where much "
    "your way well down should because each just those people how too little state good very "
    "make world still own see men work long get here between both life being under never day "
    "same another know while last might us great old year off come since against go came"
)
COMMON = _COMMON.split()
_SYLLABLES = (
    "ka ri to me sa lu vo ne di pa ro mi te la su no fe ga hi jo ku ly ma ni or pe qu ra se "
    "ti un ve wa xi yo ze ba ce do el fi go ha in ja ke li mo nu ob pi ra st tr ch sh th an "
    "er on es at en"
)
SYLLABLES = _SYLLABLES.split()


def vocabulary(rng: random.Random, size: int) -> list[str]:
    """`size` distinct made-up words of 2 to 4 syllables (a stemmer leaves most alone)."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Corpus:
    """Documents in Markdown: headings every few paragraphs, sentences mixing common words
    with a Zipf-distributed vocabulary of 30,000 words, some of them each document's own."""

    def __init__(self, seed: int = SEED, words: int = 30_000) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng, words)
        weights = [1 / (rank + 1) ** 1.05 for rank in range(words)]
        self.cumulative = list(_accumulate(weights))
        self.topics: list[list[str]] = []

    def word(self) -> str:
        if self.rng.random() < 0.45:
            return self.rng.choice(COMMON)
        return self.rng.choices(self.words, cum_weights=self.cumulative)[0]

    def sentence(self, topic: list[str]) -> str:
        words = [self.rng.choice(topic) if self.rng.random() < 0.08 else self.word()
                 for _ in range(self.rng.randint(6, 22))]  # fmt: skip
        return " ".join(words).capitalize() + "."

    def document(self, number: int, size: int) -> str:
        topic = self.rng.sample(self.words, 12)
        self.topics.append(topic)
        parts = [f"# Document {number}: {' '.join(topic[:3])}"]
        length = 0
        while length < size:
            heading = " ".join([*self.rng.sample(topic, 2), self.word()])
            parts.append(f"## {heading.capitalize()}")
            for _ in range(self.rng.randint(2, 6)):
                paragraph = " ".join(self.sentence(topic) for _ in range(self.rng.randint(2, 7)))
                parts.append(paragraph)
                length += len(paragraph)
        return "\n\n".join(parts) + "\n"

    def queries(self, texts: list[str], count: int) -> list[tuple[str, str]]:
        """(kind, query): questions built from a document's words, a few of the words one
        document is about (rare elsewhere), common words only (many matches), and words no
        document has."""
        queries = []
        for n in range(count):
            kind = ("question", "question", "rare", "common", "absent")[n % 5]
            if kind == "question":
                words = [w for w in self.rng.choice(texts).split() if w.isalpha() and len(w) > 3]
                picked = self.rng.sample(words, self.rng.randint(2, 4))
                query = f"How do I {picked[0]} the {' '.join(picked[1:])}?"
            elif kind == "rare":
                query = " ".join(
                    self.rng.sample(self.rng.choice(self.topics), self.rng.randint(1, 3))
                )
            elif kind == "common":
                query = " ".join(self.rng.sample(self.words[:20], self.rng.randint(2, 5)))
            else:
                query = " ".join(uuid.UUID(int=self.rng.getrandbits(128)).hex[:8] for _ in "ab")
            queries.append((kind, query))
        return queries


def _accumulate(values: list[float]) -> list[float]:
    total, out = 0.0, []
    for value in values:
        total += value
        out.append(total)
    return out


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


# --- in the child process: one database ----------------------------------------------------


def measure(documents: int, queries: int) -> dict[str, Any]:
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.db import connection

    from knowledge.services import document_upload
    from knowledge.tools import document_tools

    call_command("migrate", verbosity=0)
    user = User.objects.create_user(f"bench-{uuid.uuid4().hex[:8]}")
    corpus = Corpus()
    texts = [corpus.document(n, corpus.rng.randint(4_000, 16_000)) for n in range(documents)]
    size = sum(len(text.encode()) for text in texts)

    started = time.perf_counter()
    passages = 0
    for number, text in enumerate(texts):
        file = SimpleUploadedFile(f"doc-{number}.md", text.encode(), content_type="text/markdown")
        passages += document_upload(owner=user, file=file).passage_count
    indexing = time.perf_counter() - started
    if connection.vendor == "postgresql":
        # What autovacuum's auto-analyze does within a minute of such a load: without
        # statistics on the new rows the planner guesses a plan 10 times slower.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE knowledge_passage")
            cursor.execute("ANALYZE knowledge_document")

    search = next(t for t in document_tools(user.pk) if t.name == "search_documents")
    asked = corpus.queries(texts, queries)
    for _, query in asked[:10]:  # warm the caches and the connection
        search.function(query=query, limit=5)
    timings: dict[str, list[float]] = {}
    found = 0
    for kind, query in asked:
        started = time.perf_counter()
        answer = json.loads(search.function(query=query, limit=5))
        timings.setdefault(kind, []).append((time.perf_counter() - started) * 1000)
        found += bool(answer["results"])
    every = [ms for values in timings.values() for ms in values]
    return {
        "database": connection.vendor,
        "documents": documents,
        "megabytes": round(size / 1024 / 1024, 1),
        "passages": passages,
        "indexing_seconds": round(indexing, 1),
        "queries": len(every),
        "with_results": found,
        "p50_ms": round(statistics.median(every), 1),
        "p99_ms": round(percentile(every, 0.99), 1),
        "by_kind": {
            kind: {
                "p50_ms": round(statistics.median(v), 1),
                "p99_ms": round(percentile(v, 0.99), 1),
            }
            for kind, v in timings.items()
        },
    }


# --- in the parent: one child per database -------------------------------------------------


def _child(database_url: str, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "oracle.settings"}
    # The settings would start the embedded Redis otherwise; nothing here talks to Redis.
    env.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
    command = [sys.executable, __file__, "--child", "--documents", str(args.documents),
               "--queries", str(args.queries)]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench/search.py failed on {database_url}:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _postgres() -> tuple[str, str] | None:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            name = f"oracle_bench_search_{uuid.uuid4().hex[:8]}"
            admin.execute(f'CREATE DATABASE "{name}"')
    except Exception as error:  # not running, or not reachable: measured on SQLite only
        print(f"PostgreSQL on 127.0.0.1:5432 not used: {error}", file=sys.stderr)
        return None
    return f"postgres://postgres@127.0.0.1:5432/{name}", name


def _drop(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=250)
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(measure(args.documents, args.queries)))
        return

    results = []
    if args.database in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as folder:
            results.append(_child(f"sqlite:///{folder}/bench.sqlite3", args))
    if args.database in ("postgres", "both") and (postgres := _postgres()):
        url, name = postgres
        try:
            results.append(_child(url, args))
        finally:
            _drop(name)

    print("| database | documents | text | passages | indexing | queries | with results "
          "| p50 | p99 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['database']} | {r['documents']:,} | {r['megabytes']} MB | {r['passages']:,} "
            f"| {r['indexing_seconds']} s | {r['queries']} | {r['with_results']} "
            f"| {r['p50_ms']} ms | {r['p99_ms']} ms |"
        )
    print()
    print("| database | " + " | ".join(f"{k} p50 / p99" for k in results[0]["by_kind"]) + " |")
    print("|---|" + "---|" * len(results[0]["by_kind"]))
    for r in results:
        cells = [f"{v['p50_ms']} / {v['p99_ms']} ms" for v in r["by_kind"].values()]
        print(f"| {r['database']} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
