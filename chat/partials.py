"""chat's partials (templates/chat/_*.html) as HTML for the page and the stream alike,
and the badge that names why a run ended."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from agents.state import TerminationReason
from agents.wording import reason_label


def render_partial(template: str, **context: Any) -> SafeString:
    """A partial of templates/chat/, as one line of HTML (safe: the template escaped it).

    Partials compose by `{% include %}`, which keeps every character of a file: those
    that are included end without a newline and keep their comments inside tags, so
    that an include shows what this shows."""
    return mark_safe(render_to_string(f"chat/{template}", context).strip())


def reason_badge(reason: str, metric: str | None = None) -> dict[str, str] | None:
    """The badge that names why a run (or a subagent) ended (`_reason_badge.html`):
    none for one that completed. Tool calls asked for on the last call an iteration
    limit allowed (`metric` "iterations") are named after that limit."""
    if not reason or reason == TerminationReason.COMPLETED:
        return None
    if reason == TerminationReason.TOOL_BUDGET_VIOLATION and metric == "iterations":
        return {"reason": reason, "label": reason_label(TerminationReason.MAX_ITERATIONS)}
    return {"reason": reason, "label": reason_label(reason)}
