"""Consent through the whole product (a real worker, real servers): a grant ("Always allow
here") is bound to the server and the tool it was given for, never to the name the model
sees, and with no `approval` key a tool asks first unless its server marks it read-only.
"""

from __future__ import annotations

import httpx
import pytest

from agents.testing.fake_server import FakeServer
from tests import processes
from tests.e2e.test_mcp import call
from tests.e2e.test_runs_api import sse_events, start_conversation, wait_until_finished
from tests.stack import OracleStack


@pytest.fixture(scope="module")
def client(mcp_stack: OracleStack) -> httpx.Client:
    with mcp_stack.client(mcp_stack.create_user("grace")) as client:
        processes.wait_for(
            lambda: client.get("/healthz").json().get("mcp_servers", {}).get("testing_") == "ready",
            120,
        )
        yield client


def waiting(client: httpx.Client, run_id: str) -> list[dict[str, object]]:
    """The calls a run waits on, once it pauses for them (or finishes without)."""

    def paused() -> list[dict[str, object]] | bool:
        run = client.get(f"/api/runs/{run_id}/").json()
        return run["pending_approval"] or run["status"] == "finished"

    found = processes.wait_for(paused, 60)
    return found if isinstance(found, list) else []


def switch(stack: OracleStack, username: str, server: str, *, enabled: bool) -> None:
    """The user's switch of a server on the Tools page (its service, in the stack)."""
    code = (
        "from django.contrib.auth.models import User;"
        "from toolbox.services import server_switch;"
        f"server_switch(user=User.objects.get(username={username!r}), name={server!r},"
        f" enabled={enabled!r})"
    )
    assert processes.shell(code, env=stack.env).returncode == 0


def test_an_always_allow_never_moves_to_another_servers_tool_of_the_same_name(
    client: httpx.Client, fake_provider: FakeServer, mcp_stack: OracleStack
) -> None:
    marks, other_marks = mcp_stack.folder / "testing.marks", mcp_stack.folder / "testing_.marks"
    fake_provider.set_script([call("testing___mark", {"text": "first"}), {"text": ["Marked."]}])
    conversation, run_id = start_conversation(client, "Mark it")
    (asked,) = waiting(client, run_id)
    assert asked["server"] == "testing"  # the first in the file has the plain name

    allowed = client.post(f"/api/runs/{run_id}/approve/", json={"always": True})
    assert allowed.status_code == 202, allowed.text
    assert wait_until_finished(client, run_id)["reason"] == "completed"
    assert "first" in marks.read_text()
    grants = client.get("/api/tools/").json()["grants"]
    assert [(g["server"], g["tool"], g["applies"]) for g in grants] == [("testing", "_mark", True)]

    # With `testing` switched off, `testing___mark` is the other server's `mark`: the
    # grant given for `testing`'s tool does not let it act without asking.
    switch(mcp_stack, "grace", "testing", enabled=False)
    try:
        fake_provider.set_script(
            [call("testing___mark", {"text": "second"}), {"text": ["Not marked."]}]
        )
        posted = client.post(
            f"/api/conversations/{conversation}/messages/", json={"content": "Again"}
        )
        second = posted.json()["run_id"]
        (asked,) = waiting(client, second)
        assert (asked["name"], asked["server"]) == ("testing___mark", "testing_")
        assert not other_marks.exists()
        assert client.post(f"/api/runs/{second}/deny/", json={}).status_code == 202
        assert wait_until_finished(client, second)["reason"] == "completed"
        assert not other_marks.exists()
    finally:
        switch(mcp_stack, "grace", "testing", enabled=True)

    # Revoked, the tool asks again in that conversation.
    revoked = client.post(
        "/api/tools/grants/revoke/",
        json={"conversation": conversation, "server": "testing", "tool": "_mark"},
    )
    assert (revoked.status_code, revoked.json()["grants"]) == (200, [])
    fake_provider.set_script([call("testing___mark", {"text": "third"}), {"text": ["Asked."]}])
    third = client.post(
        f"/api/conversations/{conversation}/messages/", json={"content": "Once more"}
    ).json()["run_id"]
    (asked,) = waiting(client, third)
    assert asked["server"] == "testing"
    assert client.post(f"/api/runs/{third}/cancel/").status_code in (200, 202)
    wait_until_finished(client, third)
    assert "third" not in marks.read_text()


def test_with_no_approval_key_a_tool_not_marked_read_only_asks_first(
    client: httpx.Client, fake_provider: FakeServer
) -> None:
    tools = {tool["name"]: tool for tool in client.get("/api/tools/").json()["tools"]}
    toggle, echo = tools["everything__toggle-subscriber-updates"], tools["everything__echo"]
    assert (toggle["approval"], toggle["why"]) == (True, "its server does not mark it read-only")
    assert (echo["approval"], echo["annotations"].get("readOnlyHint")) == (False, True)

    fake_provider.set_script(
        [
            call("everything__echo", {"message": "hello"}),
            call("everything__toggle-subscriber-updates", {}),
            {"text": ["Asked first."]},
        ]
    )
    _, run_id = start_conversation(client, "Echo, then toggle")
    (asked,) = waiting(client, run_id)

    assert (asked["name"], asked["server"]) == (
        "everything__toggle-subscriber-updates",
        "everything",
    )
    results = [e for e in sse_events(client, run_id) if e["type"] == "tool.result"]
    assert [(r["name"], r["ok"]) for r in results] == [("everything__echo", True)]
    assert client.post(f"/api/runs/{run_id}/deny/", json={}).status_code == 202
    assert wait_until_finished(client, run_id)["reason"] == "completed"
