"""Whether a call of an MCP tool waits for the user, and what an "Always allow" of it is
bound to.

The MCP specification asks hosts to obtain the user's consent before invoking a tool.
Under `"approval": "auto"` (the default) Oracle asks before every call of a tool its
server does not annotate `readOnlyHint: true`, and always before one annotated
`destructiveHint: true`; `"always"` asks for every tool, `"never"` for none but those in
`approve_tools`. Annotations are the server's word: trusted only as far as the server.

A grant ("Always allow here") is bound to the server's configured name, the tool's own
name and a fingerprint of its description and input schema: never to the name the model
sees, which is derived again each run (a collision of two servers' names could move it),
and a tool that changes what it says it does asks again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

Grant = tuple[str, str, str]  # (server, tool, fingerprint)

# The annotations the Tools page shows, by the protocol's names.
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


@dataclass(frozen=True)
class Consent:
    """Whether a tool's calls wait for the user's Approve, and why, in words."""

    asks: bool
    why: str


def annotations_of(listed: Any) -> dict[str, bool]:
    """The tool's behaviour hints its server gave (by the protocol's names), those set."""
    given = getattr(listed, "annotations", None)
    if given is None:
        return {}
    hints = {
        "readOnlyHint": getattr(given, "read_only_hint", None),
        "destructiveHint": getattr(given, "destructive_hint", None),
        "idempotentHint": getattr(given, "idempotent_hint", None),
        "openWorldHint": getattr(given, "open_world_hint", None),
    }
    return {name: value for name, value in hints.items() if isinstance(value, bool)}


def consent(
    approval: str, approve_tools: frozenset[str], tool: str, hints: dict[str, bool]
) -> Consent:
    """Whether a call of `tool` asks first under its server's `approval` and
    `approve_tools`, given the tool's annotations `hints`."""
    if approval == "always":
        return Consent(True, 'its server\'s "approval" is "always"')
    if tool in approve_tools:
        return Consent(True, "its server's approve_tools names it")
    if approval == "never":
        return Consent(False, 'its server\'s "approval" is "never"')
    if hints.get("destructiveHint") is True:
        return Consent(True, "its server marks it destructive")
    if hints.get("readOnlyHint") is True:
        return Consent(False, "its server marks it read-only")
    return Consent(True, "its server does not mark it read-only")


def fingerprint(description: str, schema: object) -> str:
    """A short digest of what a tool says it does: its description and input schema."""
    text = json.dumps([description, schema], sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def grant_of(value: object) -> Grant | None:
    """A stored grant read back ([server, tool, fingerprint]); None for anything else."""
    if (
        isinstance(value, list | tuple)
        and len(value) == 3
        and all(isinstance(part, str) and part for part in value)
    ):
        return (value[0], value[1], value[2])
    return None
