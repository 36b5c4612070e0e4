"""Reads for chat, always scoped by owner: another user's objects do not exist (404)."""

from __future__ import annotations

import math
import re
import uuid
import zoneinfo
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Greatest, Length, Lower, StrIndex, Substr
from django.http import Http404
from django.utils import timezone
from django.utils.dateformat import format as date_format

from chat.models import Conversation, Message, Role, Run


def _uuid(value: object) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise Http404 from None


def conversation_list(*, user: Any) -> QuerySet[Conversation]:
    return Conversation.objects.filter(owner=user, deleted_at__isnull=True)


def conversation_usage(*, conversation: Conversation) -> dict[str, Any]:
    """What every run of the conversation used, summed (and how many runs there were)."""
    totals = conversation.runs.aggregate(
        runs=Count("id"),
        iterations=Sum("iterations"),
        tool_calls=Sum("tool_calls"),
        tokens=Sum("tokens"),
        cost_usd=Sum("cost_usd"),
        elapsed_ms=Sum("elapsed_ms"),
    )
    return {key: value or 0 for key, value in totals.items()}


def conversation_get(*, user: Any, conversation_id: object) -> Conversation:
    try:
        return Conversation.objects.get(
            owner=user, id=_uuid(conversation_id), deleted_at__isnull=True
        )
    except Conversation.DoesNotExist:
        raise Http404 from None


def run_get(*, user: Any, run_id: object) -> Run:
    try:
        return Run.objects.select_related("conversation").get(
            conversation__owner=user, id=_uuid(run_id), conversation__deleted_at__isnull=True
        )
    except Run.DoesNotExist:
        raise Http404 from None


def message_list(*, conversation: Conversation) -> QuerySet[Message]:
    return conversation.messages.order_by("seq")


# --- The sidebar ------------------------------------------------------------------------

SIDEBAR_LIMIT = 200
TIME_ZONE_COOKIE = "tz"  # the browser's time zone (an IANA name), as sidebar.js keeps it
UNDO_SECONDS = 8  # how long the sidebar offers to undo a delete
SNIPPET_CHARS = 40  # of a message shown on either side of what a search matched


@dataclass(frozen=True)
class Snippet:
    """The text of a message around what a search matched (`match`, as written there)."""

    before: str
    match: str
    after: str


@dataclass(frozen=True)
class SidebarItem:
    conversation: Conversation
    snippet: Snippet | None = None  # when a message matched the search, not the title


@dataclass(frozen=True)
class SidebarGroup:
    label: str  # "Today", "Yesterday", "Previous 7 days", "Previous 30 days", "October 2026"
    items: list[SidebarItem]


@dataclass(frozen=True)
class Sidebar:
    groups: list[SidebarGroup]
    query: str
    deleted: Conversation | None  # deleted a moment ago: its Undo is still offered
    undo_seconds: int  # how much longer
    time_zone: str  # the one the days are counted in


def sidebar_get(
    *,
    user: Any,
    query: str = "",
    time_zone: str | None = None,
    now: datetime | None = None,
) -> Sidebar:
    """The user's conversations that have messages, newest first, grouped by the day
    they last changed in `time_zone` (an IANA name; the server's when unknown). With a
    `query`, only those whose title or messages contain it (any case)."""
    now = now or timezone.now()
    query = " ".join(query.split())[:200]
    conversations = conversation_list(user=user).filter(
        Exists(Message.objects.filter(conversation=OuterRef("pk")))
    )
    snippets: dict[int, Snippet] = {}
    if query:
        said = Message.objects.filter(
            conversation=OuterRef("pk"),
            role__in=[Role.USER, Role.ASSISTANT],
            content__icontains=query,
        ).order_by("seq")
        conversations = conversations.annotate(said=Subquery(said.values("pk")[:1])).filter(
            Q(title__icontains=query) | Q(said__isnull=False)
        )
    found = list(conversations[:SIDEBAR_LIMIT])
    if query:
        # A title that matches says enough; a message that matches is quoted.
        wanted = [getattr(c, "said", None) for c in found if query.lower() not in c.title.lower()]
        snippets = _snippets([pk for pk in wanted if pk is not None], query)
    zone = _zone(time_zone)
    today = now.astimezone(zone).date()
    groups: list[SidebarGroup] = []
    for conversation in found:
        label = _day_label(conversation.updated_at.astimezone(zone).date(), today)
        if not groups or groups[-1].label != label:
            groups.append(SidebarGroup(label, []))
        snippet = snippets.get(getattr(conversation, "said", None) or 0)
        groups[-1].items.append(SidebarItem(conversation, snippet))
    deleted = (
        Conversation.objects.filter(
            owner=user, deleted_at__gte=now - timedelta(seconds=UNDO_SECONDS)
        )
        .order_by("-deleted_at")
        .first()
    )
    left = 0
    if deleted is not None and deleted.deleted_at is not None:
        left = math.ceil(UNDO_SECONDS - (now - deleted.deleted_at).total_seconds())
    return Sidebar(groups, query, deleted, max(1, left), str(zone))


def conversation_get_deleted(*, user: Any, conversation_id: object) -> Conversation:
    """A conversation of the user's that was deleted and not purged yet (for Undo)."""
    try:
        return Conversation.objects.get(
            owner=user, id=_uuid(conversation_id), deleted_at__isnull=False
        )
    except Conversation.DoesNotExist:
        raise Http404 from None


def run_list(*, conversation: Conversation) -> QuerySet[Run]:
    """The conversation's runs, first first."""
    return conversation.runs.order_by("created_at")


def _zone(name: str | None) -> tzinfo:
    if name:
        try:
            return zoneinfo.ZoneInfo(name)
        except (KeyError, ValueError, OSError):  # not a zone this server knows
            pass
    return timezone.get_default_timezone()


def _day_label(day: date, today: date) -> str:
    age = (today - day).days
    if age <= 0:
        return "Today"
    if age == 1:
        return "Yesterday"
    if age <= 7:
        return "Previous 7 days"
    if age <= 30:
        return "Previous 30 days"
    return date_format(day, "F Y")


def _snippets(message_ids: list[int], query: str) -> dict[int, Snippet]:
    """The text around the first match in each message, cut in the database: a long
    answer is not read whole to show a line of it."""
    start = Greatest(StrIndex(Lower("content"), Lower(Value(query))) - SNIPPET_CHARS, Value(1))
    rows = (
        Message.objects.filter(pk__in=message_ids)
        .annotate(
            start=start,
            length=Length("content"),
            excerpt=Substr("content", start, SNIPPET_CHARS * 2 + len(query)),
        )
        .values_list("pk", "excerpt", "start", "length")
    )
    return {
        pk: _snippet(excerpt, query, cut_start=start > 1, cut_end=start + len(excerpt) <= length)
        for pk, excerpt, start, length in rows
    }


def _snippet(excerpt: str, query: str, *, cut_start: bool, cut_end: bool) -> Snippet:
    text = re.sub(r"\s+", " ", excerpt)
    at = text.lower().find(query.lower())
    if at < 0:  # the database and Python disagree on the case of some letter
        return Snippet(text + ("…" if cut_end else ""), "", "")
    before, match, after = text[:at], text[at : at + len(query)], text[at + len(query) :]
    if cut_start:  # begin and end on whole words
        before = "…" + (before.split(" ", 1)[1] if " " in before else before)
    if cut_end:
        after = (after.rsplit(" ", 1)[0] if " " in after else after) + "…"
    return Snippet(before, match, after)
