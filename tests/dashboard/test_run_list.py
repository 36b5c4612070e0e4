"""The runs behind a figure: the same runs the figure counted, with their counters, reason,
limit action and stuck pattern, and never what the users wrote or were answered."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.dashboard.conftest import NOW, Helper, make_run

pytestmark = pytest.mark.django_db
STUCK = "3 identical calls of read_document(doc-7) in a row"


def rows(page: str) -> int:
    return len(re.findall(r'<tr class="run-row[ "]', page))


def get(client: Client, query: str) -> str:
    response = client.get(f"/dashboard/runs/?{query}")
    assert response.status_code == 200, response.content.decode()
    return response.content.decode()


def test_it_lists_the_runs_a_reason_counted(staff_client: Client, alice: User) -> None:
    make_run(alice, reason="no_progress", pattern=STUCK, iterations=7, tokens=12_345,
             question="My very private question")  # fmt: skip
    make_run(alice, reason="completed")
    make_run(alice, reason="no_progress", pattern=STUCK, ago=timedelta(days=3))

    page = get(staff_client, "period=24h&reason=no_progress")

    assert rows(page) == 1
    assert "1 run of the last 24 hours" in page
    assert "No progress" in page and STUCK in page
    assert "12,345" in page and ">7<" in page
    assert "alice" in page
    assert "My very private question" not in page
    assert "The secret answer." not in page
    assert rows(get(staff_client, "period=7d&reason=no_progress")) == 2


def test_it_filters_by_limit_skill_user_action_pattern_hour_and_day(
    staff_client: Client, alice: User, bob: User
) -> None:
    make_run(alice, reason="max_iterations", skill="deep_research", ago=timedelta(hours=2))
    make_run(bob, reason="timeout", action="pause", paused=True, ago=timedelta(hours=2))
    make_run(bob, reason="no_progress", pattern=STUCK, ago=timedelta(hours=4))
    make_run(bob, reason="no_progress", pattern="2 identical calls of x(1) in a row")
    make_run(alice, reason="completed", ago=timedelta(hours=2))

    assert rows(get(staff_client, "period=24h&reason=limit")) == 4
    assert rows(get(staff_client, "period=24h&skill=deep_research")) == 1
    assert rows(get(staff_client, f"period=24h&user={bob.pk}")) == 3
    assert rows(get(staff_client, "period=24h&reason=limit&action=pause")) == 1
    assert rows(get(staff_client, "period=24h&reason=limit&action=stop")) == 3
    assert rows(get(staff_client, "period=24h&event=paused")) == 1
    page = get(staff_client, f"period=24h&reason=no_progress&pattern={STUCK}")
    assert rows(page) == 1 and STUCK in page
    hour = (NOW - timedelta(hours=2)).strftime("%Y-%m-%d %H")
    assert rows(get(staff_client, f"period=24h&reason=limit&hour={hour}")) == 2
    assert rows(get(staff_client, f"period=24h&hour={hour}")) == 3
    # The day of the runs made two hours ago (not today's: just after midnight, today has
    # none of these runs yet). The test settings' time zone is UTC.
    day = (NOW - timedelta(hours=2)).date().isoformat()
    assert rows(get(staff_client, f"period=30d&day={day}")) >= 1


def test_it_lists_helper_runs_by_type(staff_client: Client, alice: User) -> None:
    made = make_run(
        alice,
        skill="deep_research",
        helpers=(
            Helper("researcher", iterations=12, tokens=23_456),
            Helper("researcher", reason="max_iterations", iterations=30),
            Helper("summarizer"),
        ),
    )

    page = get(staff_client, "period=24h&agent=researcher")

    assert rows(page) == 2
    assert "2 researcher helper runs of the last 24 hours" in page
    assert "23,456" in page and "Iteration limit" in page
    assert str(made.run.pk)[:8] in page
    assert rows(get(staff_client, "period=24h&agent=researcher&reason=limit")) == 1
    assert rows(get(staff_client, "period=24h&agent=summarizer")) == 1


def test_the_figure_and_its_list_agree(staff_client: Client, alice: User, bob: User) -> None:
    for index in range(7):
        make_run(alice if index % 2 else bob, reason="timeout", ago=timedelta(hours=index + 1))
    page = staff_client.get("/dashboard/?period=24h").content.decode()
    link = re.search(r'href="(/dashboard/runs/\?period=24h&amp;reason=timeout)">(\d+)<', page)
    assert link is not None
    assert rows(get(staff_client, link[1].replace("&amp;", "&").split("?")[1])) == int(link[2])


def test_it_pages_long_lists(staff_client: Client, alice: User) -> None:
    for _ in range(51):
        make_run(alice)
    first = get(staff_client, "period=24h")
    assert rows(first) == 50 and "Page 1 of 2" in first and 'rel="next"' in first
    assert rows(get(staff_client, "period=24h&page=2")) == 1


@pytest.mark.parametrize(
    "query",
    ["period=1y", "reason=bored", "user=bob", "hour=yesterday", "day=2026-13-01", "colour=red",
     "agent=researcher&action=stop"],
)  # fmt: skip
def test_a_bad_filter_is_a_clear_400(staff_client: Client, query: str) -> None:
    response = staff_client.get(f"/dashboard/runs/?{query}")
    assert response.status_code == 400
    assert 'class="banner banner-error"' in response.content.decode()


def test_a_claimed_run_keeps_the_limit_action_it_runs_under(db: None) -> None:
    from chat.models import Conversation, Message, Role, Run
    from runs.runner import claim
    from settings_ui.services import agent_config_update

    owner = User.objects.create_user("claimer")
    agent_config_update(user=owner, raw={"limit_action": "pause"})
    conversation = Conversation.objects.create(owner=owner)
    question = Message.objects.create(conversation=conversation, seq=1, role=Role.USER,
                                      content="What is 2+2?")  # fmt: skip
    run = Run.objects.create(conversation=conversation, pending_action="start",
                             user_message=question)  # fmt: skip

    assert claim(str(run.pk)) is not None

    run.refresh_from_db()
    assert run.limit_action == "pause"
