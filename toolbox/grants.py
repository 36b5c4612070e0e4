"""The "Always allow here" a user gave: listed on the Tools page and the API, revoked there.

A grant lives on its conversation (`Conversation.tool_grants`) and is bound to the
server, the tool's own name and a fingerprint of what the tool says it does
(`agents.mcp_consent`); one whose tool has changed since no longer applies, and says so.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from chat.models import Conversation
from toolbox.models import McpServerStatus


class UnknownGrant(ValueError):
    """The user gave no such grant (or the conversation is not theirs)."""


def grants(*, user: Any) -> list[dict[str, Any]]:
    """Every grant `user` gave, newest conversation first: the conversation, the server
    and tool, and whether it still applies (the tool unchanged since)."""
    current = {
        tuple(tool["grant"])
        for status in McpServerStatus.objects.all()
        for tool in status.tools
        if tool.get("grant")
    }
    rows = []
    conversations = Conversation.objects.filter(owner=user, deleted_at__isnull=True).exclude(
        tool_grants=[]
    )
    for conversation in conversations.order_by("-updated_at"):
        for grant in conversation.grants():
            server, tool, _ = grant
            rows.append(
                {
                    "conversation": str(conversation.pk),
                    "title": str(conversation),
                    "server": server,
                    "tool": tool,
                    "applies": grant in current,
                }
            )
    return rows


def revoke(*, user: Any, conversation: object, server: object, tool: object) -> None:
    """Take back `user`'s grants of the server's tool in the conversation: its calls
    there ask again. `UnknownGrant` when there is none."""
    if not (
        isinstance(conversation, str) and conversation
        and isinstance(server, str) and server
        and isinstance(tool, str) and tool
    ):  # fmt: skip
        raise UnknownGrant("Name the conversation, the server and the tool of the grant.")
    with transaction.atomic():
        try:
            row = Conversation.objects.select_for_update().get(
                pk=conversation, owner=user, deleted_at__isnull=True
            )
        except (Conversation.DoesNotExist, ValidationError, ValueError, TypeError):
            raise UnknownGrant("You gave no such grant.") from None
        kept = [grant for grant in row.grants() if grant[:2] != (server, tool)]
        if len(kept) == len(row.grants()):
            raise UnknownGrant("You gave no such grant.")
        row.tool_grants = [list(grant) for grant in kept]
        row.save(update_fields=["tool_grants"])
