"""What the fuzz tests act on: two users with conversations, runs and documents, and a
snapshot of every row the product keeps, to show that a refused request changed none."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Model

from accounts.services import api_token_create
from chat.models import Conversation, Message, Role, Run, RunEvent, RunStatus
from chat.services import conversation_create, conversation_delete
from knowledge.services import document_upload, ensure_guide

# Fields that change when anything is read (a login, a token's "last used").
VOLATILE = {"last_login", "last_used_at"}


def is_project_module(name: str) -> bool:
    """Whether the module (an app, say) is this project's own, not a dependency's."""
    path = Path(import_module(name).__file__ or "")
    return path.is_relative_to(settings.BASE_DIR) and ".venv" not in path.parts


def _project_models() -> list[type[Model]]:
    mine = [config for config in apps.get_app_configs() if is_project_module(config.name)]
    return [User, *(model for config in mine for model in config.get_models())]


def snapshot() -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the project's tables (and the users), but for the read-time fields."""
    rows = {}
    for model in _project_models():
        names = [f.attname for f in model._meta.concrete_fields if f.name not in VOLATILE]
        rows[model._meta.label] = list(model._default_manager.order_by("pk").values_list(*names))
    return rows


@dataclass(frozen=True)
class World:
    """Ids worth trying for each URL parameter: alice's own (`mine`), and bob's or gone
    ones (`others`); and the two users' API tokens."""

    mine: dict[str, list[str]]
    others: dict[str, list[str]]
    alice_token: str
    bob_token: str


def _run(conversation: Conversation, status: str, reason: str = "", events: int = 0) -> Run:
    conversation.last_message_seq = 1
    conversation.save(update_fields=["last_message_seq"])
    message = Message.objects.create(
        conversation=conversation, seq=1, role=Role.USER, content="Question?"
    )
    run = Run.objects.create(
        conversation=conversation, status=status, reason=reason, user_message=message,
        last_event_seq=events,
    )  # fmt: skip
    message.run = run
    message.save(update_fields=["run"])
    for seq in range(1, events + 1):
        kind = "run.started" if seq == 1 else "assistant.delta"
        RunEvent.objects.create(run=run, seq=seq, type=kind, data={"seq": seq, "type": kind})
    return run


def build_world(alice: User, bob: User) -> World:
    guide = ensure_guide()
    finished = conversation_create(owner=alice, title="Finished")
    paused = conversation_create(owner=alice, title="Paused")
    queued = conversation_create(owner=alice, title="Queued")
    deleted = conversation_create(owner=alice, title="Deleted")
    bobs = conversation_create(owner=bob, title="Bob's")
    runs = [
        _run(finished, RunStatus.FINISHED, "max_iterations", events=3),
        _run(paused, RunStatus.PAUSED, "token_budget", events=2),
        _run(queued, RunStatus.QUEUED),
        _run(deleted, RunStatus.FINISHED, "completed", events=1),
        _run(bobs, RunStatus.FINISHED, "completed", events=1),
    ]
    conversation_delete(conversation=deleted)
    documents = [
        document_upload(
            owner=owner, file=SimpleUploadedFile("notes.md", b"# Notes\n\nOwls.", "text/markdown")
        )
        for owner in (alice, bob)
    ]
    return World(
        mine={
            "conversation_id": [str(c.pk) for c in (finished, paused, queued)],
            "run_id": [str(r.pk) for r in runs[:3]],
            "document_id": [str(documents[0].pk), str(guide.pk)],
        },
        others={
            "conversation_id": [str(deleted.pk), str(bobs.pk)],
            "run_id": [str(r.pk) for r in runs[3:]],
            "document_id": [str(documents[1].pk)],
        },
        alice_token=api_token_create(user=alice, name="fuzz")[1],
        bob_token=api_token_create(user=bob, name="fuzz")[1],
    )
