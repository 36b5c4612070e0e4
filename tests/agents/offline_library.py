"""An in-memory library of documents for the offline model's tests: the corpus, the
search_documents/read_document/list_documents contract over it, and a run that asks it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agents.builtin_tools import calculator, current_time
from agents.config import AgentConfig
from agents.events import EventCollector
from agents.loop import RunDeps, RunResult, start_run
from agents.model import Message
from agents.offline_model import OfflineModel
from agents.tools import Tool, ToolError, ToolRegistry
from agents.tree import create_tree

ARROW = "\u203a"  # the single angle quote between headings in a location
LIMITS = (
    "Limits keep every run in check. To change the iteration limit, open Settings and set "
    "Max iterations to a number from 1 to 50. The new limit applies to runs that start after "
    "the change. Tick Unlimited to remove the ceiling; the operator's hard cap still applies. "
)
STOPPING = (
    "Press Stop to end a run at once. What the Oracle wrote so far is kept in the "
    "conversation, and Continue picks the run up again. "
)
PANCAKES = (
    "Whisk 1 cup of flour with 2 eggs and a cup of milk. Rest the batter for ten minutes. "
    "Fry each pancake for two minutes on each side. "
)
TRIP = "In 1998 we travelled around the world by train, from Lisbon to Vladivostok. "
BUDGET = (
    "The token budget now counts the prompt and the completion of every model call in a "
    "run, subagents included, so that a run which delegates its work to helpers cannot "
    "spend more than the user allowed it, whatever the helpers do and however many of them "
    "there are, and a warning is shown when the run has used four fifths of it, which the "
    "user can change on the settings page along with the other limits of a run. "
)

# As a Markdown file reads: wrapped lines, a heading, a list.
WRAPPED = (
    "## Time\n\nThe **timeout** is the wall time a run\nmay take, from 10 to 600 seconds.\n\n"
    "- Paused time does not count\n  toward the timeout.\n- Nor does time waiting for you.\n\n"
)
OPENING_LENGTH = 600  # as much of each document's start as list_documents gives
CORPUS: dict[int, tuple[str, list[tuple[str, str]]]] = {
    12: (
        "Oracle user guide",
        [
            ("Welcome", "Oracle answers your questions with tools, under limits you set. " * 8),
            (f"Settings {ARROW} Limits", LIMITS),
            (f"Chat {ARROW} Stop", STOPPING),
        ],
    ),
    7: ("Family recipes", [("Pancakes", PANCAKES)]),
    9: ("Trip notes", [("Summer 1998", TRIP)]),
    3: ("Release notes", [("Version 2.0", BUDGET)]),
    5: ("Notes", [("Time", WRAPPED)]),
}


@dataclass
class Library:
    """An in-memory knowledge base behind the search_documents/read_document/list_documents
    contract (the user's documents are `corpus`, newest first).

    Its search is naive on purpose, like a keyword index: any passage with one of the
    query's words is a hit, so the model must judge relevance itself."""

    corpus: dict[int, tuple[str, list[tuple[str, str]]]] = field(
        default_factory=lambda: dict(CORPUS)
    )
    search_error: str | None = None
    read_error: str | None = None
    list_error: str | None = None
    searches: list[dict[str, Any]] = field(default_factory=list)
    reads: list[dict[str, Any]] = field(default_factory=list)

    def passages(self) -> list[dict[str, Any]]:
        found = []
        for document_id, (title, sections) in self.corpus.items():
            start = 0
            for location, text in sections:
                found.append(
                    {"document_id": document_id, "title": title, "location": location,
                     "start": start, "length": len(text), "text": text}
                )  # fmt: skip
                start += len(text)
        return found

    def search_documents(self, query: str, limit: int = 5) -> str:
        """Search the user's documents.

        Args:
            query: What to look for.
            limit: How many passages at most.
        """
        self.searches.append({"query": query, "limit": limit})
        if self.search_error is not None:
            raise ToolError(self.search_error)
        words = set(re.findall(r"\w+", query.lower()))
        scored = [
            (len(words & set(re.findall(r"\w+", passage["text"].lower()))), passage)
            for passage in self.passages()
        ]
        ranked = [passage for score, passage in sorted(scored, key=lambda s: -s[0]) if score]
        return json.dumps({"query": query, "results": ranked[:limit]})

    def read_document(self, document_id: int, start: int = 0, length: int = 2000) -> str:
        """Read part of a document.

        Args:
            document_id: Which document.
            start: Where to start, in characters.
            length: How many characters.
        """
        self.reads.append({"document_id": document_id, "start": start, "length": length})
        if self.read_error is not None:
            raise ToolError(self.read_error)
        title, sections = self.corpus[document_id]
        whole = "".join(text for _, text in sections)
        return json.dumps(
            {"document_id": document_id, "title": title, "start": start,
             "length": len(whole[start : start + length]), "total_length": len(whole),
             "text": whole[start : start + length]}
        )  # fmt: skip

    def list_documents(self, limit: int = 10) -> str:
        """List the user's documents.

        Args:
            limit: How many documents at most.
        """
        if self.list_error is not None:
            raise ToolError(self.list_error)
        documents = [
            {"document_id": document_id, "title": title,
             "total_length": sum(len(text) for _, text in sections),
             "sections": [location for location, _ in sections],
             "opening": "".join(text for _, text in sections)[:OPENING_LENGTH]}
            for document_id, (title, sections) in self.corpus.items()
        ]  # fmt: skip
        return json.dumps({"total": len(documents), "documents": documents[:limit]})

    def tools(self, *, read: bool = True, listing: bool = True) -> ToolRegistry:
        registry = ToolRegistry(
            [
                Tool.from_function(calculator, inline=True),
                Tool.from_function(current_time, inline=True),
                Tool.from_function(self.search_documents, name="search_documents"),
            ]
        )
        if read:
            registry.add(Tool.from_function(self.read_document, name="read_document"))
        if listing:
            registry.add(Tool.from_function(self.list_documents, name="list_documents"))
        return registry


@dataclass
class Asked:
    result: RunResult
    events: EventCollector

    @property
    def text(self) -> str:
        return self.result.final_text

    @property
    def calls(self) -> list[str]:
        return [call["name"] for call in self.events.of_type("tool.call")]

    @property
    def quotes(self) -> list[str]:
        return [line[2:] for line in self.text.splitlines() if line.startswith("> ")]


async def ask(
    question: str,
    library: Library,
    *,
    read: bool = True,
    listing: bool = True,
    history: list[Message] | None = None,
    passage_link: str | None = None,
    **config: Any,
) -> Asked:
    deps = RunDeps(
        model=OfflineModel(passage_link=passage_link),
        tree=create_tree("default", AgentConfig.from_raw(config)),
        tools=library.tools(read=read, listing=listing),
    )
    events = EventCollector()
    result = await start_run(question, deps, on_event=events, history=history or [])
    return Asked(result, events)
