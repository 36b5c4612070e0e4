"""The grants a user gave ("Always allow here"): listed on the Tools page and by
`GET /api/tools/`, each saying whether it still applies, and revoked there; another
user's grant cannot be seen or touched, and a bad request changes nothing."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.mcp_consent import fingerprint
from chat.models import Conversation
from toolbox.hub import record_status
from toolbox.models import McpServerStatus

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
GRANT = ["files", "delete", fingerprint("Delete a file.", SCHEMA)]
CHANGED = ["files", "move", "0123456789abcdef"]  # given for an older version of the tool


@pytest.fixture
def granted(alice: User) -> Conversation:
    McpServerStatus.objects.create(
        name="files",
        transport="stdio",
        state="ready",
        tools=[
            {"name": "files__delete", "tool": "delete", "description": "Delete a file.",
             "approval": True, "grant": GRANT},
            {"name": "files__move", "tool": "move", "description": "Move a file.",
             "approval": True, "grant": ["files", "move", "fedcba9876543210"]},
        ],
    )  # fmt: skip
    return Conversation.objects.create(
        owner=alice, title="Cleaning up", tool_grants=[GRANT, CHANGED]
    )


def logged_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def test_the_page_and_the_api_list_each_grant_and_whether_it_still_applies(granted, alice, client):
    client = logged_in(client, alice)

    page = client.get("/tools/").content.decode()
    listed = client.get("/api/tools/").json()["grants"]

    assert [(g["server"], g["tool"], g["applies"], g["title"]) for g in listed] == [
        ("files", "delete", True, "Cleaning up"),
        ("files", "move", False, "Cleaning up"),
    ]
    assert 'aria-label="Revoke delete of files in Cleaning up"' in page
    assert "changed since: asks again" in page


def test_revoke_on_the_page_takes_the_grant_back(granted, alice, client):
    client = logged_in(client, alice)

    fields = {"conversation": str(granted.pk), "server": "files", "tool": "delete"}
    answer = client.post("/tools/grants/revoke/", fields, HTTP_HX_REQUEST="true")

    assert answer.status_code == 200
    assert "delete" not in answer.content.decode() and "move" in answer.content.decode()
    granted.refresh_from_db()
    assert granted.tool_grants == [CHANGED]


def test_revoke_over_the_api(granted, alice, client):
    client = logged_in(client, alice)

    answer = client.post(
        "/api/tools/grants/revoke/",
        json.dumps({"conversation": str(granted.pk), "server": "files", "tool": "move"}),
        content_type="application/json",
    )

    assert answer.status_code == 200
    assert [g["tool"] for g in answer.json()["grants"]] == ["delete"]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ("{not json", 400),
        ("[1]", 400),
        ('{"conversation": "x", "server": "files", "tool": "delete", "extra": 1}', 400),
        ('{"conversation": "not-a-uuid", "server": "files", "tool": "delete"}', 404),
        ('{"server": "files", "tool": "delete"}', 404),
        ('{"conversation": null, "server": 3, "tool": []}', 404),
    ],
)
def test_a_bad_revoke_is_a_clear_json_error_and_changes_nothing(
    granted, alice, client, body, status
):
    client = logged_in(client, alice)

    answer = client.post("/api/tools/grants/revoke/", body, content_type="application/json")

    assert answer.status_code == status
    assert answer.json()["error"]
    granted.refresh_from_db()
    assert granted.tool_grants == [GRANT, CHANGED]


def test_another_users_grant_is_neither_listed_nor_revoked(granted, bob, client):
    client = logged_in(client, bob)

    fields = {"conversation": str(granted.pk), "server": "files", "tool": "delete"}
    page_answer = client.post("/tools/grants/revoke/", fields)
    api_answer = client.post("/api/tools/grants/revoke/", json.dumps(fields),
                             content_type="application/json")  # fmt: skip

    assert client.get("/api/tools/").json()["grants"] == []
    assert (page_answer.status_code, api_answer.status_code) == (404, 404)
    granted.refresh_from_db()
    assert granted.tool_grants == [GRANT, CHANGED]


def test_the_recorded_tools_carry_what_a_grant_is_bound_to(db):
    from agents.mcp import McpTool

    tool = McpTool(name="files__delete", server="files", tool="delete",
                   description="Delete a file.", input_schema=SCHEMA, needs_approval=True,
                   why="its server marks it destructive",
                   annotations={"destructiveHint": True})  # fmt: skip
    record_status([{"name": "files", "transport": "stdio", "state": "ready", "error": "",
                    "problems": []}], [tool])  # fmt: skip

    (row,) = McpServerStatus.objects.get(name="files").tools
    assert row["grant"] == GRANT
    assert (row["why"], row["annotations"]) == (
        "its server marks it destructive",
        {"destructiveHint": True},
    )


def test_a_form_sent_to_the_revoke_api_is_a_json_error(granted, alice, client):
    client = logged_in(client, alice)

    fields = {"conversation": str(granted.pk), "server": "files", "tool": "delete"}
    answer = client.post("/api/tools/grants/revoke/", fields)

    assert answer.status_code == 400
    assert "JSON object" in answer.json()["error"]
    granted.refresh_from_db()
    assert granted.tool_grants == [GRANT, CHANGED]
