"""What a person does in the chat, in one place for the pages and the API: their
conversations and messages (`chat.services.*`), and what they do to a run (`runs.control`,
`runs.interruptions`: a run's life is the `runs` app's)."""

from __future__ import annotations

from chat.services.conversations import (
    TITLE_MAX,
    conversation_create,
    conversation_delete,
    conversation_rename,
    conversation_restore,
    conversation_set_model,
    conversations_purge_deleted,
)
from chat.services.messages import (
    BUSY,
    busy_state,
    message_edit,
    message_post,
    run_regenerate,
)
from runs.control import (
    run_answer_approval,
    run_approve,
    run_cancel,
    run_continue,
    run_deny,
)
from runs.errors import InvalidInput, RunConflict
from runs.queue import ACTIVE

__all__ = [
    "ACTIVE",
    "BUSY",
    "TITLE_MAX",
    "InvalidInput",
    "RunConflict",
    "busy_state",
    "conversation_create",
    "conversation_delete",
    "conversation_rename",
    "conversation_restore",
    "conversation_set_model",
    "conversations_purge_deleted",
    "message_edit",
    "message_post",
    "run_answer_approval",
    "run_approve",
    "run_cancel",
    "run_continue",
    "run_deny",
    "run_regenerate",
]
