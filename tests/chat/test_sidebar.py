"""The sidebar: conversations by date, search, rename in place, delete with Undo."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from chat import selectors, services
from chat.api import message_json, run_json
from chat.models import Conversation, Message, Role, Run, RunEvent, RunStatus
from chat.services import conversation_create

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
HTMX = {"HTTP_HX_REQUEST": "true"}


def chat(owner: User, title: str, *lines: str, at: datetime | None = None) -> Conversation:
    """A conversation with a user message and an answer for each pair of `lines`,
    last changed `at`."""
    conversation = conversation_create(owner=owner, title=title)
    for seq, text in enumerate(lines or ("Hello",), start=1):
        role = Role.USER if seq % 2 else Role.ASSISTANT
        Message.objects.create(conversation=conversation, seq=seq, role=role, content=text)
    changes: dict[str, Any] = {"last_message_seq": max(1, len(lines))}
    if at is not None:
        changes["updated_at"] = at
    Conversation.objects.filter(pk=conversation.pk).update(**changes)
    conversation.refresh_from_db()
    return conversation


def groups(user: User, **options: Any) -> list[tuple[str, list[str]]]:
    sidebar = selectors.sidebar_get(user=user, **options)
    return [(g.label, [i.conversation.title for i in g.items]) for g in sidebar.groups]


def titles(html: str) -> list[str]:
    return re.findall(r'id="conversation-link-[^"]+" href="[^"]+">([^<]*)</a>', html)


def test_conversations_are_grouped_by_date(alice: User) -> None:
    chat(alice, "Last year", at=datetime(2025, 12, 24, 10, tzinfo=UTC))
    chat(alice, "October", at=datetime(2026, 10, 10, 10, tzinfo=UTC))
    chat(alice, "Early November", at=datetime(2026, 11, 5, 10, tzinfo=UTC))
    chat(alice, "Tuesday", at=datetime(2026, 11, 17, 10, tzinfo=UTC))
    chat(alice, "Late last night", at=datetime(2026, 11, 19, 23, 30, tzinfo=UTC))
    chat(alice, "This morning", at=datetime(2026, 11, 20, 9, tzinfo=UTC))

    assert groups(alice, now=NOW) == [
        ("Today", ["This morning"]),
        ("Yesterday", ["Late last night"]),
        ("Previous 7 days", ["Tuesday"]),
        ("Previous 30 days", ["Early November"]),
        ("October 2026", ["October"]),
        ("December 2025", ["Last year"]),
    ]


def test_the_days_are_the_users_own_when_their_time_zone_is_known(alice: User) -> None:
    chat(alice, "Late last night", at=datetime(2026, 11, 19, 23, 30, tzinfo=UTC))
    chat(alice, "This morning", at=datetime(2026, 11, 20, 9, tzinfo=UTC))

    # In Tokyo it is 21:00 on the 20th, and 23:30 UTC on the 19th was 08:30 on the 20th.
    assert groups(alice, now=NOW, time_zone="Asia/Tokyo") == [
        ("Today", ["This morning", "Late last night"])
    ]
    # An unknown zone is the server's (UTC here), not an error.
    assert groups(alice, now=NOW, time_zone="Mars/Olympus")[0] == ("Today", ["This morning"])


def test_the_page_shows_the_groups_in_the_browsers_time_zone(client: Client, alice: User) -> None:
    chat(alice, "Recent")
    chat(alice, "Older", at=timezone.now() - timedelta(days=3))
    client.force_login(alice)
    client.cookies["tz"] = "Asia/Tokyo"

    page = client.get("/").content.decode()

    assert page.index(">Today</h3>") < page.index("Recent") < page.index(">Previous 7 days</h3>")
    assert page.index(">Previous 7 days</h3>") < page.index("Older")


def test_empty_conversations_are_not_listed(client: Client, alice: User) -> None:
    chat(alice, "Said something")
    conversation_create(owner=alice, title="Never said anything")
    client.force_login(alice)

    page = client.get("/").content.decode()

    assert titles(page) == ["Said something"]


def test_search_finds_titles_and_message_text_of_the_users_own_conversations(
    client: Client, alice: User, bob: User
) -> None:
    chat(alice, "Trip to Lisbon", "Plan three days", "Day one: Alfama and the castle.")
    chat(alice, "Bread", "How do I feed a sourdough starter?", "Twice a day.")
    chat(alice, "Taxes", "When is the deadline?", "In April.")
    chat(bob, "Bob's sourdough", "Sourdough for Bob")
    client.force_login(alice)

    by_title = client.get("/sidebar/", {"q": "LISBON"}, **HTMX).content.decode()
    by_content = client.get("/sidebar/", {"q": "SourDough"}, **HTMX).content.decode()

    assert titles(by_title) == ["Trip to Lisbon"]
    assert "<html" not in by_title  # the list alone, for htmx to swap in
    assert titles(by_content) == ["Bread"]
    assert "How do I feed a <mark>sourdough</mark> starter?" in by_content


def test_a_long_message_is_shown_around_the_match(alice: User) -> None:
    text = "word " * 40 + "the needle is here " + "filler " * 40
    chat(alice, "Haystack", text)

    (group,) = selectors.sidebar_get(user=alice, query="needle").groups
    snippet = group.items[0].snippet

    assert snippet is not None
    assert snippet.match == "needle"
    assert snippet.before.startswith("…") and snippet.before.endswith("word the ")
    assert snippet.after.startswith(" is here") and snippet.after.endswith("…")
    assert len(snippet.before + snippet.match + snippet.after) < 120


def test_search_that_finds_nothing_says_so(client: Client, alice: User) -> None:
    chat(alice, "Trip to Lisbon")
    client.force_login(alice)

    html = client.get("/sidebar/", {"q": "porto"}, **HTMX).content.decode()

    assert titles(html) == []
    assert "No conversations match “porto”." in html


def test_search_works_without_javascript_as_a_plain_get(client: Client, alice: User) -> None:
    chat(alice, "Trip to Lisbon")
    chat(alice, "Bread")
    client.force_login(alice)

    page = client.get("/", {"q": "bread"}).content.decode()

    assert titles(page) == ["Bread"]
    assert 'name="q" value="bread"' in page
    assert 'hx-trigger="input changed delay:250ms, search"' in page


def test_rename_in_place_saves_and_shows_the_new_title(client: Client, alice: User) -> None:
    conversation = chat(alice, "Trip")
    client.force_login(alice)

    editing = client.get(f"/sidebar/{conversation.id}/rename/", **HTMX).content.decode()
    saved = client.post(f"/sidebar/{conversation.id}/rename/", {"title": " Trip  to Rome "}, **HTMX)

    assert '<input name="title" value="Trip"' in editing
    assert titles(saved.content.decode()) == ["Trip to Rome"]
    assert Conversation.objects.get(pk=conversation.pk).title == "Trip to Rome"


def test_a_rename_of_the_open_conversation_also_changes_the_header(
    client: Client, alice: User
) -> None:
    conversation = chat(alice, "Trip")
    client.force_login(alice)

    saved = client.post(
        f"/sidebar/{conversation.id}/rename/",
        {"title": "Rome", "current": str(conversation.id)},
        **HTMX,
    ).content.decode()

    assert 'id="title" name="title" value="Rome"' in saved
    assert 'aria-current="page"' in saved


def test_a_bad_title_is_shown_inline_and_nothing_changes(client: Client, alice: User) -> None:
    conversation = chat(alice, "Trip")
    client.force_login(alice)

    response = client.post(f"/sidebar/{conversation.id}/rename/", {"title": "x" * 201}, **HTMX)

    html = response.content.decode()
    assert response.status_code == 200
    assert "At most 200 characters." in html
    assert '<input name="title"' in html  # still editing
    assert Conversation.objects.get(pk=conversation.pk).title == "Trip"


def _snapshot(conversation: Conversation) -> dict[str, Any]:
    return {
        "messages": [message_json(m) for m in conversation.messages.order_by("seq")],
        "runs": [run_json(r) for r in conversation.runs.order_by("created_at")],
        "events": list(
            RunEvent.objects.filter(run__conversation=conversation).values_list("seq", "data")
        ),
        "updated_at": Conversation.objects.get(pk=conversation.pk).updated_at,
    }


def _finished_run(conversation: Conversation) -> Run:
    run = Run.objects.create(conversation=conversation, status=RunStatus.FINISHED,
                             reason="completed", iterations=2, tokens=120)  # fmt: skip
    Message.objects.filter(conversation=conversation).update(run=run)
    RunEvent.objects.create(run=run, seq=1, type="run.finished", data={"seq": 1})
    return run


def test_delete_then_undo_brings_the_conversation_back_exactly(client: Client, alice: User) -> None:
    conversation = chat(alice, "Trip to Lisbon", "Plan three days", "Day one: Alfama.")
    _finished_run(conversation)
    other = chat(alice, "Bread")
    before = _snapshot(conversation)
    client.force_login(alice)

    deleted = client.post(
        f"/sidebar/{conversation.id}/delete/", {"current": str(other.id)}, **HTMX
    ).content.decode()

    assert titles(deleted) == ["Bread"]
    assert "Deleted “Trip to Lisbon”." in deleted
    assert "Undo" in deleted
    assert client.get(f"/c/{conversation.id}/").status_code == 404
    assert client.get(f"/api/conversations/{conversation.id}/").status_code == 404
    listed = client.get("/api/conversations/").json()["conversations"]
    assert [c["title"] for c in listed] == ["Bread"]

    restored = client.post(f"/sidebar/{conversation.id}/restore/", **HTMX).content.decode()

    assert titles(restored) == ["Bread", "Trip to Lisbon"]
    assert "Deleted “" not in restored
    assert _snapshot(conversation) == before
    assert "Plan three days" in client.get(f"/c/{conversation.id}/").content.decode()


def test_deleting_the_open_conversation_goes_home_where_undo_is_offered(
    client: Client, alice: User
) -> None:
    conversation = chat(alice, "Trip to Lisbon")
    client.force_login(alice)

    response = client.post(
        f"/sidebar/{conversation.id}/delete/", {"current": str(conversation.id)}, **HTMX
    )
    home = client.get("/").content.decode()

    assert response["HX-Redirect"] == "/"
    assert "Deleted “Trip to Lisbon”." in home
    assert f'hx-post="/sidebar/{conversation.id}/restore/"' in home
    assert titles(home) == []


def test_the_header_delete_form_still_deletes_with_undo_on_the_home_page(
    client: Client, alice: User
) -> None:
    conversation = chat(alice, "Trip to Lisbon")
    client.force_login(alice)

    response = client.post(f"/c/{conversation.id}/delete/", follow=True)

    assert response.redirect_chain == [("/", 302)]
    assert "Deleted “Trip to Lisbon”." in response.content.decode()
    assert client.get(f"/c/{conversation.id}/").status_code == 404


def test_undo_is_offered_for_a_few_seconds_only(client: Client, alice: User) -> None:
    conversation = chat(alice, "Trip to Lisbon")
    services.conversation_delete(conversation=conversation)
    Conversation.objects.filter(pk=conversation.pk).update(
        deleted_at=timezone.now() - timedelta(seconds=selectors.UNDO_SECONDS + 1)
    )
    client.force_login(alice)

    assert "Deleted “" not in client.get("/").content.decode()


def test_deleting_stops_the_conversations_run(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice, title="Busy")
    _, run = services.message_post(conversation=conversation, content="Count to ten")
    client.force_login(alice)

    client.post(f"/sidebar/{conversation.id}/delete/", **HTMX)

    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED
    assert run.reason == "cancelled"


def test_deleted_conversations_are_purged_after_a_minute(alice: User) -> None:
    old = chat(alice, "Old")
    _finished_run(old)
    recent = chat(alice, "Recent")
    kept = chat(alice, "Kept")
    for conversation in (old, recent):
        services.conversation_delete(conversation=conversation)
    Conversation.objects.filter(pk=old.pk).update(deleted_at=timezone.now() - timedelta(seconds=61))

    assert services.conversations_purge_deleted() == 1

    assert set(Conversation.objects.values_list("title", flat=True)) == {"Recent", "Kept"}
    assert not Message.objects.filter(conversation_id=old.pk).exists()
    assert not Run.objects.filter(conversation_id=old.pk).exists()
    assert not RunEvent.objects.filter(run__conversation_id=old.pk).exists()
    assert kept.messages.count() == 1


@pytest.mark.parametrize(
    ("method", "suffix"),
    [("get", ""), ("get", "rename/"), ("post", "rename/"), ("post", "delete/"),
     ("post", "restore/")],
)  # fmt: skip
def test_another_users_conversation_is_404_in_the_sidebar(
    client: Client, alice: User, bob: User, method: str, suffix: str
) -> None:
    conversation = chat(bob, "Bob's")
    client.force_login(alice)

    response = getattr(client, method)(f"/sidebar/{conversation.id}/{suffix}", {"title": "x"})

    assert response.status_code == 404
    stored = Conversation.objects.get(pk=conversation.pk)
    assert (stored.title, stored.deleted_at) == ("Bob's", None)


def test_only_a_deleted_conversation_can_be_restored(client: Client, alice: User) -> None:
    conversation = chat(alice, "Here")
    client.force_login(alice)

    assert client.post(f"/sidebar/{conversation.id}/restore/", **HTMX).status_code == 404


def test_undo_on_the_home_page_reopens_the_conversation(client: Client, alice: User) -> None:
    conversation = chat(alice, "Trip to Lisbon")
    client.force_login(alice)
    client.post(f"/sidebar/{conversation.id}/delete/", {"current": str(conversation.id)}, **HTMX)

    undone = client.post(f"/sidebar/{conversation.id}/restore/", {"current": ""}, **HTMX)

    assert undone["HX-Redirect"] == f"/c/{conversation.id}/"
    assert client.get(f"/c/{conversation.id}/").status_code == 200
